# lit configuration that runs the GoogleTest binaries (named *Tests) that
# memfmt_add_unittest places in build/test/unittests.
import os

import lit.formats

config.name = "memfmt-unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.memfmt_obj_root, "test", "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
# Idle OpenMP threads sleep instead of spinning on cores that other tests run
# on (see ../lit.cfg.py).
config.environment["OMP_WAIT_POLICY"] = "PASSIVE"
