# Debian package: `cpack -G DEB` (or plain `cpack`) in the build tree writes
# gr-gpuradar_<version>_<arch>.deb. It installs into /usr whatever CMAKE_INSTALL_PREFIX the
# build was configured with (the install rules' destinations are relative), the Python
# package into Debian's /usr/lib/python3/dist-packages and the GRC blocks into
# /usr/share/gnuradio/grc/blocks, where Debian's Python and gnuradio-companion look
# without any environment variable. Included at the end of the top-level CMakeLists.txt:
# its install step must run after every directory's (CMP0082 keeps them in order).

set(GPURADAR_DEB_MAINTAINER "gr-gpuradar maintainers <maintainers@users.noreply.a-seed-cc91bce4.example>"
    CACHE STRING "Maintainer field of the Debian package (Name <email>)")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gr-gpuradar)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${GPURADAR_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "GNU Radio blocks for radar signal processing on NVIDIA GPUs (CPU backend too)")
set(CPACK_PACKAGE_DESCRIPTION
    "Pulse-Doppler (pulse compression, Doppler, CFAR, tracking), SAR imaging and array \
processing blocks for GNU Radio 3.10, each with a CUDA and a CPU backend, their GRC \
blocks and examples, and the apps gpuradar-sim, gpuradar-process, gpuradar-sar and \
gpuradar-demo. Without an NVIDIA GPU every block runs on the CPU.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${GPURADAR_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION comm)
# The libraries' dependencies (GNU Radio's, FFTW, ZeroMQ, ...) come from dpkg-shlibdeps
# (dpkg-dev); the CUDA runtime libraries belong to NVIDIA's toolkit, not to a Debian
# package, and are left out (CPack passes --ignore-missing-info). The Python side: the
# extension is built for this Python minor version; GNU Radio's Python and GRC come with
# Debian's gnuradio; the apps use numpy and matplotlib; the QT displays PyQt5 and
# pyqtgraph.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS
    "${CMAKE_BINARY_DIR}/kernels;${CMAKE_BINARY_DIR}/lib")
execute_process(COMMAND ${PYTHON_EXECUTABLE} -c
                    "import sys; print('%d.%d' % sys.version_info[:2], end='')"
                OUTPUT_VARIABLE GPURADAR_PYTHON_VERSION)
string(REGEX MATCH "^([0-9]+)\\.([0-9]+)$" _ "${GPURADAR_PYTHON_VERSION}")
math(EXPR _next_minor "${CMAKE_MATCH_2} + 1")
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "gnuradio (>= 3.10), python3 (>= ${GPURADAR_PYTHON_VERSION}), python3 (<< ${CMAKE_MATCH_1}.${_next_minor}), python3-numpy, python3-matplotlib")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3-pyqt5, python3-pyqtgraph")
# gzip: a fraction of xz's time on the 2-core CI machine, which builds the package.
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)

# The Python package into Debian's path. The build's GR_PYTHON_DIR follows its own prefix
# (lib/python3.11/dist-packages for /usr/local); in /usr that directory is searched too,
# but Debian's packages put modules in lib/python3/dist-packages, as GNU Radio's own. cpack
# alone defines GPURADAR_PACKAGE_PYTHON_DIR for the install step, which then moves the
# package there; `cmake --install` is unchanged. Same depth, so the extension's $ORIGIN
# RPATH still reaches lib/.
set(CPACK_CUSTOM_INSTALL_VARIABLES "GPURADAR_PACKAGE_PYTHON_DIR=lib/python3/dist-packages")
install(CODE "
if(DEFINED GPURADAR_PACKAGE_PYTHON_DIR
   AND NOT \"${GR_PYTHON_DIR}\" STREQUAL GPURADAR_PACKAGE_PYTHON_DIR)
    set(root \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
    set(to \"\${root}/\${GPURADAR_PACKAGE_PYTHON_DIR}/gnuradio\")
    file(MAKE_DIRECTORY \"\${to}\")
    file(RENAME \"\${root}/${GR_PYTHON_DIR}/gnuradio/gpuradar\" \"\${to}/gpuradar\")
    # Remove the directories the move left empty.
    set(dir \"${GR_PYTHON_DIR}/gnuradio\")
    while(dir AND IS_DIRECTORY \"\${root}/\${dir}\")
        file(GLOB left \"\${root}/\${dir}/*\")
        if(left)
            break()
        endif()
        file(REMOVE_RECURSE \"\${root}/\${dir}\")
        get_filename_component(dir \"\${dir}\" DIRECTORY)
    endwhile()
    message(STATUS \"gr-gpuradar package: Python package moved to \${to}/gpuradar\")
endif()
")

include(CPack)
