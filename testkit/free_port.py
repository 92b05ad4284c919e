"""testkit.free_port for the Python test drivers and benchmarks: a TCP port on
127.0.0.1 the kernel says is free now (the socket is closed again; whoever
binds it next does so a moment later). The C++ twin is free_port.hpp, the
shell's is tests/lib/test_lib.sh's. Import it with sys.path.insert(0, <repo>/testkit)."""
import socket


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
