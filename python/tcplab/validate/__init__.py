"""``tcplab validate``: the same dumbbell on the real Linux kernel and in tcplab.

:mod:`tcplab.validate.kernel` runs the kernel side (network namespaces, an
emulated bottleneck; the host's part in :mod:`tcplab.validate.kernel_host`) and
writes a kernel directory; :mod:`tcplab.validate.fidelity` is what the command
validates (the case) and names the rest: :mod:`tcplab.validate.sides` runs
tcplab's side and puts both into one form, :mod:`tcplab.validate.metrics`
extracts the same metrics from both, :mod:`tcplab.validate.compare` makes the
table and :mod:`tcplab.validate.fidelity_report` writes the fidelity report.
"""
