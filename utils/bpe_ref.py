#!/usr/bin/env python3
"""An independent byte-level BPE tokenizer for Hugging Face tokenizer.json.

Written from the format's definition (docs/Tokenizers.md) to check blockc's
C++ tokenizer (lib/Tokenizer) against something it did not compute. It
shares no code with it: the split regexes of GPT-2, Llama 3 and Qwen2 are
implemented here by hand over code points with `unicodedata` categories (no
regex engine), NFC comes from `unicodedata`, and BPE is the classic loop that
merges every occurrence of the best-ranked pair.

    bpe_ref.py encode DIR TEXT [--add-bos]    ids, comma separated
    bpe_ref.py decode DIR IDS                 text of comma-separated ids
    bpe_ref.py train --corpus FILE --vocab-size N --style gpt2|llama3|qwen2
                     --out DIR [--merges-form string|list]
        writes a small tokenizer.json (and the config files of that style)
        learnt from FILE, for the tests.
"""

import argparse
import collections
import json
import os
import sys
import unicodedata

GPT2_PATTERN = (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+"
                r"| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+")
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+"
                  r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
                  r"|\s+(?!\S)|\s+")
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+"
                 r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
                 r"|\s+(?!\S)|\s+")

# Unicode's White_Space property, which is what \s means to Oniguruma, the
# regex engine of Hugging Face's tokenizers.
WHITE_SPACE = set("\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f"
                  "\u3000") | {chr(c) for c in range(0x2000, 0x200B)}


def is_space(c):
    return c in WHITE_SPACE


def is_letter(c):
    return unicodedata.category(c)[0] == "L"


def is_number(c):
    return unicodedata.category(c)[0] == "N"


def is_other(c):
    """[^\\s\\p{L}\\p{N}]"""
    return not (is_space(c) or is_letter(c) or is_number(c))


def run_end(s, i, pred, limit=None):
    """The end of the run of characters from i that satisfy pred."""
    j = i
    while j < len(s) and pred(s[j]) and (limit is None or j - i < limit):
        j += 1
    return j


def match_space(s, i):
    """\\s+(?!\\S)|\\s+ at i (s[i] is a space)."""
    end = run_end(s, i, is_space)
    if end == len(s) or end - i == 1:
        return end
    return end - 1  # leave one space to go with what follows


def match_gpt2(s, i):
    """The end of the match of GPT2_PATTERN at i."""
    for c in ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d"):
        if s.startswith(c, i):
            return i + len(c)
    for pred in (is_letter, is_number, is_other):
        starts = [i + 1, i] if s[i] == " " else [i]
        for start in starts:
            end = run_end(s, start, pred)
            if end > start:
                return end
    return match_space(s, i)


def contraction_end(s, i):
    """(?i:'s|'t|'re|'ve|'m|'ll|'d) at i, case folded as Unicode does."""
    if s[i] != "'":
        return None
    for suffix in ("s", "t", "re", "ve", "m", "ll", "d"):
        part = s[i + 1:i + 1 + len(suffix)]
        if len(part) == len(suffix) and all(
                c.casefold() == x for c, x in zip(part, suffix)):
            return i + 1 + len(suffix)
    return None


def match_llama3(s, i, digits):
    """The end of the match of LLAMA3_PATTERN (digits=3) or QWEN2_PATTERN
    (digits=1) at i."""
    end = contraction_end(s, i)
    if end is not None:
        return end
    # [^\r\n\p{L}\p{N}]?\p{L}+
    c = s[i]
    if (c not in "\r\n" and not is_letter(c) and not is_number(c)
            and i + 1 < len(s) and is_letter(s[i + 1])):
        return run_end(s, i + 1, is_letter)
    if is_letter(c):
        return run_end(s, i, is_letter)
    # \p{N}{1,digits}
    if is_number(c):
        return run_end(s, i, is_number, digits)
    # ' ?[^\s\p{L}\p{N}]+[\r\n]*'
    for start in ([i + 1, i] if c == " " else [i]):
        end = run_end(s, start, is_other)
        if end > start:
            return run_end(s, end, lambda x: x in "\r\n")
    # \s*[\r\n]+ : up to the last line break of the run of spaces
    end = run_end(s, i, is_space)
    breaks = [j for j in range(i, end) if s[j] in "\r\n"]
    if breaks:
        return breaks[-1] + 1
    return match_space(s, i)


SPLITTERS = {
    GPT2_PATTERN: match_gpt2,
    LLAMA3_PATTERN: lambda s, i: match_llama3(s, i, 3),
    QWEN2_PATTERN: lambda s, i: match_llama3(s, i, 1),
}


def split(pattern, text):
    match = SPLITTERS.get(pattern)
    if match is None:
        raise ValueError("no hand-written split for the pattern %r" % pattern)
    pieces, i = [], 0
    while i < len(text):
        end = match(text, i)
        pieces.append(text[i:end])
        i = end
    return pieces


def byte_alphabet():
    """Byte -> character of GPT-2's byte-level alphabet."""
    printable = (list(range(ord("!"), ord("~") + 1))
                 + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100)))
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


BYTE_TO_CHAR = byte_alphabet()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


def to_alphabet(text):
    return "".join(BYTE_TO_CHAR[b] for b in text.encode("utf-8"))


def read_json(path):
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class Tokenizer:
    def __init__(self, directory):
        spec = read_json(os.path.join(directory, "tokenizer.json"))
        model = spec["model"]
        assert model["type"] == "BPE"
        self.vocab = dict(model["vocab"])
        self.ranks = {}
        for rank, merge in enumerate(model["merges"]):
            pair = tuple(merge.split(" ", 1)) if isinstance(merge, str) \
                else tuple(merge)
            self.ranks.setdefault(pair, rank)
        self.ignore_merges = model.get("ignore_merges", False)
        self.added = {t["content"]: t["id"] for t in spec["added_tokens"]}
        self.special = {t["id"] for t in spec["added_tokens"] if t["special"]}
        normalizer = spec.get("normalizer")
        self.nfc = bool(normalizer) and normalizer["type"] == "NFC"
        pre = spec["pre_tokenizer"]
        self.steps = pre["pretokenizers"] if pre["type"] == "Sequence" \
            else [pre]
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        for content, i in self.added.items():
            self.id_to_token[i] = content
        self.bos, self.eos, self.adds_bos = self.special_tokens(spec,
                                                                directory)

    def special_tokens(self, spec, directory):
        # The template of the post-processor, the last word.
        template_bos = template_eos = None
        processors = [spec.get("post_processor") or {}]
        while processors:
            p = processors.pop(0)
            processors += p.get("processors", [])
            if p.get("type") != "TemplateProcessing":
                continue
            seen_text = False
            for item in p["single"]:
                if "Sequence" in item:
                    seen_text = True
                    continue
                ids = p["special_tokens"][item["SpecialToken"]["id"]]["ids"]
                if not seen_text and template_bos is None:
                    template_bos = ids[0]
                if seen_text and template_eos is None:
                    template_eos = ids[0]
        tc = read_json(os.path.join(directory, "tokenizer_config.json")) or {}
        mc = read_json(os.path.join(directory, "config.json")) or {}

        def choose(token_key, id_key, from_template):
            if token_key in tc:
                token = tc[token_key]
                if isinstance(token, dict):
                    token = token.get("content")
                if token is None:
                    return None
                return self.added.get(token, self.vocab.get(token))
            if id_key in mc:
                value = mc[id_key]
                if isinstance(value, list):
                    value = value[0] if value else None
                return value
            return from_template

        bos = choose("bos_token", "bos_token_id", template_bos)
        eos = choose("eos_token", "eos_token_id", template_eos)
        adds_bos = tc.get("add_bos_token", template_bos is not None)
        return bos, eos, bool(adds_bos) and bos is not None

    def bpe(self, piece):
        word = to_alphabet(piece)
        if self.ignore_merges and word in self.vocab:
            return [self.vocab[word]]
        symbols = list(word)
        while len(symbols) > 1:
            pairs = [(self.ranks.get(p, None), p)
                     for p in zip(symbols, symbols[1:])]
            ranked = [rp for rp in pairs if rp[0] is not None]
            if not ranked:
                break
            _, best = min(ranked)
            merged, i = [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:
                    merged.append(symbols[i] + symbols[i + 1])
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            symbols = merged
        return [self.vocab[s] for s in symbols]

    def encode_text(self, text):
        if not text:
            return []
        if self.nfc:
            text = unicodedata.normalize("NFC", text)
        pieces = [text]
        for step in self.steps:
            out = []
            for piece in pieces:
                if step["type"] == "ByteLevel":
                    if step.get("add_prefix_space") and not piece.startswith(" "):
                        piece = " " + piece
                    if step.get("use_regex", True):
                        out += split(GPT2_PATTERN, piece)
                    else:
                        out.append(piece)
                elif step["type"] == "Split":
                    assert step["behavior"] == "Isolated"
                    out += split(step["pattern"]["Regex"], piece)
                else:
                    raise ValueError("pre-tokenizer %s" % step["type"])
            pieces = out
        ids = []
        for piece in pieces:
            ids += self.bpe(piece)
        return ids

    def encode(self, text, add_bos=False):
        ids = [self.bos] if add_bos and self.bos is not None else []
        # Added tokens first: leftmost, then longest.
        by_length = sorted(self.added, key=len, reverse=True)
        start = pos = 0
        while pos < len(text):
            token = next((t for t in by_length if text.startswith(t, pos)),
                         None)
            if token is None:
                pos += 1
                continue
            ids += self.encode_text(text[start:pos])
            ids.append(self.added[token])
            pos += len(token)
            start = pos
        return ids + self.encode_text(text[start:])

    def decode(self, ids):
        data = bytearray()
        for i in ids:
            if i in self.special or i not in self.id_to_token:
                continue
            token = self.id_to_token[i]
            if token in self.added:
                data += token.encode("utf-8")
            else:
                for c in token:
                    data += bytes([CHAR_TO_BYTE[c]]) if c in CHAR_TO_BYTE \
                        else c.encode("utf-8")
        return data.decode("utf-8", errors="replace")


# --- training a small tokenizer.json for the tests --------------------------

STYLES = {
    "gpt2": dict(pattern=GPT2_PATTERN, added=["<|endoftext|>"]),
    "llama3": dict(pattern=LLAMA3_PATTERN,
                   added=["<|begin_of_text|>", "<|end_of_text|>",
                          "<|eot_id|>"]),
    "qwen2": dict(pattern=QWEN2_PATTERN,
                  added=["<|endoftext|>", "<|im_start|>", "<|im_end|>"]),
}


def train(corpus, vocab_size, style, merges_form):
    pattern = STYLES[style]["pattern"]
    words = collections.Counter(
        tuple(to_alphabet(p)) for line in corpus.splitlines(keepends=True)
        for p in split(pattern, line))
    alphabet = [BYTE_TO_CHAR[b] for b in range(256)]
    vocab = {c: i for i, c in enumerate(alphabet)}
    merges = []
    while len(vocab) < vocab_size:
        pairs = collections.Counter()
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += count
        if not pairs:
            break
        # The most frequent pair, ties broken by the pair itself.
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        vocab.setdefault(best[0] + best[1], len(vocab))
        new_words = collections.Counter()
        for word, count in words.items():
            merged, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    merged.append(word[i] + word[i + 1])
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            new_words[tuple(merged)] += count
        words = new_words
    added = [{"id": len(vocab) + k, "content": t, "single_word": False,
              "lstrip": False, "rstrip": False, "normalized": False,
              "special": True}
             for k, t in enumerate(STYLES[style]["added"])]
    if style == "gpt2":
        pre = {"type": "ByteLevel", "add_prefix_space": False,
               "trim_offsets": True, "use_regex": True}
    else:
        pre = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern},
             "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False,
             "trim_offsets": True, "use_regex": False}]}
    post = {"type": "ByteLevel", "add_prefix_space": True,
            "trim_offsets": False, "use_regex": True}
    if style == "llama3":
        bos = added[0]
        post = {"type": "Sequence", "processors": [
            {"type": "ByteLevel", "add_prefix_space": True,
             "trim_offsets": False, "use_regex": True},
            {"type": "TemplateProcessing",
             "single": [{"SpecialToken": {"id": bos["content"], "type_id": 0}},
                        {"Sequence": {"id": "A", "type_id": 0}}],
             "pair": [],
             "special_tokens": {bos["content"]: {
                 "id": bos["content"], "ids": [bos["id"]],
                 "tokens": [bos["content"]]}}}]}
    spec = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "NFC"} if style == "qwen2" else None,
        "pre_tokenizer": pre,
        "post_processor": post,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True,
                    "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None,
            "continuing_subword_prefix": None, "end_of_word_suffix": None,
            "fuse_unk": False, "byte_fallback": False,
            "ignore_merges": style == "llama3",
            "vocab": vocab,
            "merges": [list(m) if merges_form == "list" else " ".join(m)
                       for m in merges],
        },
    }
    configs = {}
    if style == "gpt2":
        configs["config.json"] = {"model_type": "gpt2",
                                  "bos_token_id": added[0]["id"],
                                  "eos_token_id": added[0]["id"]}
    elif style == "llama3":
        configs["tokenizer_config.json"] = {
            "bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>"}
    else:
        configs["tokenizer_config.json"] = {
            "bos_token": None, "eos_token": "<|endoftext|>",
            "add_bos_token": False}
    return spec, configs


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    enc = sub.add_parser("encode")
    enc.add_argument("dir")
    enc.add_argument("text")
    enc.add_argument("--add-bos", action="store_true")
    dec = sub.add_parser("decode")
    dec.add_argument("dir")
    dec.add_argument("ids")
    tr = sub.add_parser("train")
    tr.add_argument("--corpus", required=True)
    tr.add_argument("--vocab-size", type=int, required=True)
    tr.add_argument("--style", choices=sorted(STYLES), required=True)
    tr.add_argument("--merges-form", choices=["string", "list"],
                    default="string")
    tr.add_argument("--out", required=True)
    args = parser.parse_args()
    if args.command == "encode":
        ids = Tokenizer(args.dir).encode(args.text, args.add_bos)
        print(",".join(map(str, ids)))
    elif args.command == "decode":
        ids = [int(x) for x in args.ids.split(",") if x.strip()]
        sys.stdout.write(Tokenizer(args.dir).decode(ids) + "\n")
    else:
        with open(args.corpus, encoding="utf-8") as f:
            spec, configs = train(f.read(), args.vocab_size, args.style,
                                  args.merges_form)
        os.makedirs(args.out, exist_ok=True)
        configs["tokenizer.json"] = spec
        for name, value in configs.items():
            with open(os.path.join(args.out, name), "w",
                      encoding="utf-8") as f:
                json.dump(value, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
