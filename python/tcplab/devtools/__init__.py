"""Developer tooling: how fast tcplab is, and where its time goes. Not part of the modelling API.

``tcplab bench`` (:mod:`tcplab.devtools.bench`) is the only way in from the
rest of tcplab: :mod:`tcplab.cli` imports that module when the command runs.
Nothing else in tcplab imports this package, and its modules import the
user-facing modules (``tcplab.generate``, ``tcplab.sweep``), never the
reverse. Inside, the imports go one way:

- :mod:`~tcplab.devtools.measure`: the benchmark's scenario rows and how one is
  measured in a child process (the helpers every module below shares);
- :mod:`~tcplab.devtools.bench`: the suite, the scaling curves, the memory runs
  and the command line, which hands its other modes to
- :mod:`~tcplab.devtools.benchcompare` (``--compare``),
  :mod:`~tcplab.devtools.profile` (``--profile``, Linux perf),
  :mod:`~tcplab.devtools.ns3compare` (``--ns3``) and
  :mod:`~tcplab.devtools.overhead` (``--campaign``: the sweep layer's overhead).

The scenarios themselves are the Rust core's (``tcplab_core::scenarios::bench``,
shared with ``cargo bench -p tcplab-core``), compiled into the extension with
the cargo feature ``bench``. See docs/performance.md.
"""
