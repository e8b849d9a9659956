import os
import lit.formats
from lit.llvm import llvm_config

config.name = "wsc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".py"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.wsc_obj_root, "test")

llvm_config.with_system_environment(["HOME", "TMPDIR", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                                     "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"])
llvm_config.use_default_substitutions()
config.environment["PATH"] = os.pathsep.join(
    [config.wsc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])

# Every wsc-run of the suite runs both engines, and fails where the region
# engine's outputs, cycles or counts differ from the reference engine's.
config.environment["WSC_RUN_ENGINE"] = "both"

config.substitutions.append(("%python", "/usr/bin/python3"))
config.substitutions.append(("%protoc", config.protoc))
config.substitutions.append(("%wsc_src", config.wsc_src_root))
config.substitutions.append(("%wsc_obj", config.wsc_obj_root))
config.substitutions.append(("%inputs", os.path.join(config.wsc_src_root, "test", "Inputs")))
config.substitutions.append(("%wafer_proto", os.path.join(config.wsc_src_root, "runtime", "wafer.proto")))

# `mpi`: wsc-run was built with MPI (its --help says so) and mpirun is here.
# %mpirun may run as root and put more processes than cores on this host.
import shutil
import subprocess
try:
    wsc_run_help = subprocess.run([os.path.join(config.wsc_tools_dir, "wsc-run"), "--help"],
                                  capture_output=True, text=True).stdout
except OSError:
    wsc_run_help = ""
if shutil.which("strace"):
    config.available_features.add("strace")
if "ASAN_OPTIONS" in config.environment:
    config.available_features.add("asan")
if shutil.which("mpirun") and "mpirun -np" in wsc_run_help:
    config.available_features.add("mpi")
# Under AddressSanitizer, LeakSanitizer would report OpenMPI's own allocations,
# made in components it has unloaded by the end (no name to suppress them by):
# wsc-run's leaks are checked by the unit tests, which split runs over threads.
mpi_env = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
if "ASAN_OPTIONS" in config.environment:
    mpi_env += " ASAN_OPTIONS=" + config.environment["ASAN_OPTIONS"] + ":detect_leaks=0"
config.substitutions.append(("%mpirun", "env " + mpi_env + " mpirun --oversubscribe"))
