"""``tcplab validate``: the same dumbbell on the real Linux kernel and in the simulator.

``kernel`` runs the kernel side (network namespaces, an emulated bottleneck,
``tcp_info`` sampling) and writes a directory of measurements; see its
docstring for the schema. Other modules of the package compare and report.
"""
