# -*- Python -*-
# Runs the GoogleTest binaries under unittests/ as lit tests.

import lit.formats

config.name = "BLOCKC-Unit"
config.suffixes = []
config.test_source_root = config.unittests_dir
config.test_exec_root = config.unittests_dir
config.test_format = lit.formats.GoogleTest(".", "Tests")
