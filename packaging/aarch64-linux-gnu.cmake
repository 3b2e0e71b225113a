# CMake toolchain file: an aarch64 (ARM64) build on an x86_64 Debian 12 with multiarch
# arm64 libraries (`scripts/bootstrap --arm64`). `scripts/build arm64` uses it. Tests run
# under qemu-user through CMAKE_CROSSCOMPILING_EMULATOR, so `ctest` works unchanged.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc-12)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++-12)

# libjemalloc-dev:arm64 and libmariadb-dev:arm64 cannot co-install with their amd64 twins:
# bootstrap unpacks them here (their .pc files point here).
set(DUO_ARM64_OVERLAY /opt/duodb-arm64-overlay CACHE PATH "arm64 packages unpacked beside the multiarch ones")

# Find arm64 libraries and headers only (the multiarch directories, the overlay), programs
# (python3, mysqltest, patchelf) on the host.
set(CMAKE_FIND_ROOT_PATH / ${DUO_ARM64_OVERLAY})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR}
    "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig:${DUO_ARM64_OVERLAY}/usr/lib/aarch64-linux-gnu/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# The loader and multiarch libraries are where qemu finds them (/lib/ld-linux-aarch64.so.1,
# /usr/lib/aarch64-linux-gnu); the overlay's libraries reach the build-tree programs through
# their build RPATH.
find_program(DUO_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${DUO_QEMU_AARCH64})
