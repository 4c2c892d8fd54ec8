"""`evalkit import bfcl`: convert BFCL cases from the installed bfcl-eval package into scenario YAML."""

from __future__ import annotations

import argparse

import yaml

from evalkit.cli.options import PATH, SAMPLE, SEED
from evalkit.importers.bfcl import import_bfcl
from evalkit.importers.bfcl.data import CATEGORIES
from evalkit.results.output_file import check_output_folder, write_output

__all__ = ["add_arguments", "run"]

_HEADER = "# Imported from {dataset} {category}, case {id}. License: {license}.\n# {attribution}\n"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", choices=["bfcl"])
    p.add_argument(
        "--categories",
        required=True,
        help=f"comma-separated BFCL categories, or all ({', '.join(sorted(CATEGORIES))})",
    )
    p.add_argument("--sample", type=SAMPLE, default=None, help="cases per category (seeded); default all")
    p.add_argument("--seed", type=SEED, default=0)
    p.add_argument(
        "-o", "--output", type=PATH, required=True, help="folder for the scenario files (one subfolder per category)"
    )
    p.add_argument(
        "--data",
        type=PATH,
        metavar="DIR",
        help="BFCL's data folder, laid out as bfcl_eval/data is (default: the installed bfcl-eval's)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    categories = [c.strip() for c in args.categories.split(",") if c.strip()]
    check_output_folder(args.output, option="-o")
    scenarios, report = import_bfcl(categories, args.sample, args.seed, args.data)
    for scenario in scenarios:
        # one folder per category: configs that glob scenarios/*/*.yaml do not pick imports up by accident
        path = args.output / scenario["provenance"]["category"] / f"{scenario['id']}.yaml"
        body = yaml.safe_dump(scenario, sort_keys=False, allow_unicode=True, width=120)
        write_output(path, _HEADER.format(**scenario["provenance"]) + body, option="-o")
    print(f"wrote {len(scenarios)} scenarios to {args.output}")
    for case_id, note in report.approximated:
        print(f"approximated {case_id}: {note}")
    for case_id, reason in report.skipped:
        print(f"not converted {case_id}: {reason}")
    print(f"{'category':<26} converted approximated skipped")
    for category, row in report.counts.items():
        print(f"{category:<26} {row['converted']:>9} {row['approximated']:>12} {row['skipped']:>7}")
    return 0
