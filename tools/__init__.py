"""AttnScope's Python tools, one package: run a script from the repository root as a module, e.g.
`/usr/bin/python3 -m tools.train.train_dates --help`. Modules import each other package-absolute
(`from tools.train import dates_data`); none edits the module search path (tools/check_imports.py checks that, and
that they form no cycle)."""
