"""``tcplab validate``: the same dumbbell on the real Linux kernel and in tcplab.

:mod:`tcplab.validate.kernel` runs the kernel side (network namespaces, an
emulated bottleneck) and writes a kernel directory; :mod:`tcplab.validate.fidelity`
runs tcplab's side, extracts the same metrics from both and writes the
fidelity report.
"""
