"""cardtable's tools: benchmarks, fault runs, fuzzing, simulations, tournaments, the local
stack and the dev servers.

A second distribution (``cardtable-tools``), so that the services' image and
``pip install cardtable`` carry only what runs in production. Installed, it adds its
subcommands to the ``cardtable`` command (``cardtable_tools.commands``).
"""
