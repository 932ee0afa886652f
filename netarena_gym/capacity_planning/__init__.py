"""``NetArena-CapacityPlanning-v0``: datacenter capacity planning on MALT topologies.

Modules, bottom-up: :mod:`kinds` (the MALT schema), :mod:`textproto` (the text format),
:mod:`topology` (loader and seeded generator), :mod:`model` (copy-on-write graph),
:mod:`checks` (safety rules), :mod:`ops` and :mod:`compat` (operation semantics: ours and
upstream's), :mod:`queries` (templates and question text), :mod:`generator` (levels,
sampling, ground truth as data), :mod:`grader`, :mod:`sandbox` and :mod:`sandbox_worker`
(isolated execution of agent code), :mod:`tools` and :mod:`catalogue` (the multi-step
interfaces), :mod:`prompts`, :mod:`metrics`, :mod:`expert`, :mod:`env`.
"""
