#!/usr/bin/env python3
"""Checks blockc-tokenize against a reference on texts that exercise the
split rules, non-ASCII text, emoji and special tokens.

    check_tokenizer.py --tool blockc-tokenize --tokenizer DIR
                       --reference sentencepiece|bpe_ref [--bpe-ref PATH]

For each text: the ids of --encode equal the reference's; --decode of them
equals the reference's decoding; --decode --stream prints only whole UTF-8
characters and adds up to the decoding. With bpe_ref also the round trip
decode(encode(x)) == NFC(x) (== x without a normalizer). Prints one summary
line; exits 1 at the first difference.
"""

import argparse
import importlib.util
import json
import random
import subprocess
import sys
import unicodedata

TEXTS = [
    "Hello, world!",
    "",
    " ",
    "  two  spaces  and a trailing one ",
    "The quick brown fox's tail; it's 1234567 km, isn't it?",
    "I'M SURE YOU'LL SEE THEY'RE FINE",
    "line one\nline two\r\n\n  indented\n",
    "tabs\tand\t\ttabs",
    "café naïve résumé Köln",
    "cafe\u0301 with a combining accent",
    "日本語のテキストと中文",
    "Ελληνικά και русский текст",
    "emoji 😀🎉 and a family 👨\u200d👩\u200d👧 and flags 🇫🇷",
    "numbers 3.14159 and 12345678 and ½ Ⅻ ٣٤٥",
    "<|endoftext|>inside<|endoftext|>text",
    "x<|im_start|>user\nhi<|im_end|>",
    "no\u00a0break\u2003em\u3000ideographic",
    "next\u0085line",
    "wörter𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ǅ Ⅷ",
]


def random_texts(count, seed):
    """Random mixes of letters, digits, spaces, punctuation and characters
    of 1 to 4 UTF-8 bytes."""
    rng = random.Random(seed)
    alphabet = (list("abcXYZ019 '\n\t.,!?-") +
                ["é", "ß", "ж", "λ", "中", "語", "😀", "🎉", "\u00a0",
                 "\u2003", "٣", "'s", "'T", "\r\n"])
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
            for _ in range(count)]


def run(tool, args):
    result = subprocess.run([tool] + args, capture_output=True)
    if result.returncode != 0:
        sys.exit("%s %s failed:\n%s" % (tool, " ".join(args),
                                        result.stderr.decode()))
    return result.stdout


def ids_of(output):
    line = output.decode().strip()
    return [int(x) for x in line.split(",")] if line else []


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--reference", required=True,
                        choices=["sentencepiece", "bpe_ref"])
    parser.add_argument("--bpe-ref")
    parser.add_argument("--random", type=int, default=20)
    args = parser.parse_args()

    if args.reference == "sentencepiece":
        import sentencepiece
        sp = sentencepiece.SentencePieceProcessor(
            model_file=args.tokenizer + "/tokenizer.model")
        encode, decode = sp.encode, sp.decode
    else:
        spec = importlib.util.spec_from_file_location("bpe_ref", args.bpe_ref)
        bpe_ref = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bpe_ref)
        ref = bpe_ref.Tokenizer(args.tokenizer)
        encode, decode = ref.encode, ref.decode

    texts = TEXTS + random_texts(args.random, seed=7)
    split_chars = 0
    for text in texts:
        where = "text %r" % text
        ids = ids_of(run(args.tool, ["--tokenizer=" + args.tokenizer,
                                     "--encode=" + text, "--add-bos=false"]))
        expected = encode(text)
        if ids != expected:
            sys.exit("%s: ids %s, reference %s" % (where, ids, expected))
        decoded = run(args.tool, ["--tokenizer=" + args.tokenizer,
                                  "--decode=" + ",".join(map(str, ids))])
        decoded = decoded.decode("utf-8")[:-1]
        if decoded != decode(ids):
            sys.exit("%s: decoded %r, reference %r" % (where, decoded,
                                                       decode(ids)))
        if args.reference == "bpe_ref":
            normalized = unicodedata.normalize("NFC", text) if ref.nfc \
                else text
            # Special tokens decode to nothing.
            for content, i in ref.added.items():
                if i in ref.special:
                    normalized = normalized.replace(content, "")
            if decoded != normalized:
                sys.exit("%s: round trip gives %r" % (where, decoded))
        if not ids:
            continue
        lines = run(args.tool, ["--tokenizer=" + args.tokenizer, "--stream",
                                "--decode=" + ",".join(map(str, ids))])
        chunks = []
        for line in lines.split(b"\n")[:-1]:
            try:
                chunks.append(json.loads(line.decode("utf-8")))
            except UnicodeDecodeError as e:
                sys.exit("%s: streamed a broken character: %r (%s)"
                         % (where, line, e))
        if len(chunks) != len(ids) + 1 or "".join(chunks) != decoded:
            sys.exit("%s: streamed %r, decoded %r" % (where, chunks, decoded))
        # Count the steps that held back part of a character: the token has
        # text of its own, but the stream printed nothing.
        split_chars += sum(1 for c, i in zip(chunks, ids)
                           if c == "" and decode([i]) != "")
    print("%d texts agree with %s; the stream held back part of a character "
          "%d times"
          % (len(texts), args.reference, split_chars))
    if split_chars == 0:
        sys.exit("no text split a character over tokens: the streaming "
                 "check checked nothing")


if __name__ == "__main__":
    main()
