"""``staticvec plan …``: a config's jobs, CPU-hours, GPU-hours, memory and disk from the planning model,
before anything runs."""

from __future__ import annotations

from staticvec.cli_args import add_group


def register(subparsers) -> None:
    sub = add_group(subparsers, "plan", help="cost a config's plan before running it", dest="plan_command")
    p = sub.add_parser("costs", help="per rule and in total: jobs, CPU-hours, GPU-hours, peak memory and disk",
                       description="Every job of the config's dry run through the planning model that the rules "
                                   "request their threads, memory and runtime from (config/unit_costs.yaml).")
    p.add_argument("--configfile", nargs="+", default=["config/config.yaml"],
                   help="config files, merged in order (default config/config.yaml)")
    p.add_argument("--root", default=".", help="the workflow's directory (default: here)")
    p.add_argument("--gpu-check", nargs="+", default=None, metavar="JSON",
                   help="benchmarks/gpu_check.py's JSON(s), later ones winning (a section rerun alone): their GPU "
                        "figures replace the estimates of the unit-cost file")
    p.add_argument("--stand-ins", action="store_true",
                   help="plan against the offline mirror plus empty stand-ins for inputs that are not here "
                        "(planning reads no file's content): a paper-scale plan on a machine without the dump")
    p.add_argument("--json", default=None, help="also write the plan as JSON here")
    p.set_defaults(handler=_costs)

    p = sub.add_parser("sbatch", help="every job's sbatch line under the SLURM profile, rendered offline by the plugin",
                       description="A dry run with workflow/profiles/slurm whose jobs also go through the SLURM "
                                   "executor plugin's submission code (no sbatch is called): one line per job.")
    p.add_argument("--configfile", nargs="+", default=["config/config.yaml"], help="config files, merged in order")
    p.add_argument("--root", default=".", help="the workflow's directory (default: here)")
    p.add_argument("--stand-ins", action="store_true", help="as for `plan costs`: inputs that are not here stood in for")
    p.add_argument("--json", default=None, help="write the jobs (rule, wildcards, resources, sbatch line) as JSON here")
    p.set_defaults(handler=_sbatch)

    p = sub.add_parser("slurm-orphans", help="wait for (or cancel) the SLURM jobs a lost Snakemake process left running",
                       description="After the Snakemake process of a SLURM run died (a lost login node, SIGKILL), its "
                                   "submitted jobs still run. This lists this user's queued or running jobs that a "
                                   "Snakemake run submitted from this directory and waits until they end (their "
                                   "outputs count: the rerun keeps them), so that the rerun does not submit them again "
                                   "into the same outputs. Then: snakemake --unlock, and the run's command again.")
    p.add_argument("--root", default=".", help="the run's working directory (default: here)")
    p.add_argument("--cancel", action="store_true", help="scancel them instead of waiting (the rerun redoes them)")
    p.add_argument("--poll", type=float, default=10.0, help="seconds between squeue calls (default 10)")
    p.add_argument("--timeout", type=float, default=None, help="give up after this many seconds (default: never)")
    p.set_defaults(handler=_slurm_orphans)


def _configfiles(args, tmp):
    from pathlib import Path

    files = list(args.configfile)
    if args.stand_ins:
        from staticvec.plan.mirror import stand_in_override

        files.append(str(stand_in_override(files, Path(args.root), Path(tmp))))
    return files


def _slurm_orphans(args) -> int:
    from staticvec.plan.sbatch import settle_orphans

    found = settle_orphans(args.root, cancel=args.cancel, poll_s=args.poll, timeout_s=args.timeout)
    if not found:
        print("no SLURM job of an earlier run from this directory is queued or running")
    return 0


def _sbatch(args) -> int:
    import json
    import tempfile

    from staticvec.plan.sbatch import render_sbatch

    with tempfile.TemporaryDirectory(prefix="staticvec-standins-") as tmp:
        jobs = render_sbatch(_configfiles(args, tmp), args.root)
    for job in jobs:
        print(("(local) " if job["local"] else "") + job["sbatch"])
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(jobs, fh, indent=1)
    return 0


def _costs(args) -> int:
    import tempfile

    from staticvec.plan.report import cost_plan, write_json

    with tempfile.TemporaryDirectory(prefix="staticvec-standins-") as tmp:
        plan = cost_plan(_configfiles(args, tmp), args.root, args.gpu_check)
    print(plan.markdown())
    if args.json:
        write_json(plan, args.json)
    totals = plan.totals()
    if totals["peak_disk_gb"] > totals["disk_budget_gb"]:
        # a failing status, not a figure in the totals line: `make plan && make run` stops, and a script sees it;
        # the whole plan is printed (and written) first
        from staticvec.errors import StaticvecError

        raise StaticvecError(f"the plan's peak disk, {totals['peak_disk_gb']:,.0f} GB, is over config key "
                             f"'plan.disk_budget_gb' = {totals['disk_budget_gb']:,.0f} GB: free disk and raise the "
                             "budget, or shrink the plan (teacher.cache: recompute keeps no teacher features)")
    return 0
