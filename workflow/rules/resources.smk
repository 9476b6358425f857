# External inputs: mirror first, then download; every file verified against the registry.


rule fetch_file:
    # one registry member (corpus files: one job each, so they are fetched in parallel)
    output:
        f"{W.download_dir}/{{rel_path}}",
    wildcard_constraints:
        rel_path=r"(?!\.verified/).+",
    params:
        member=lambda wc: W.member_by_path(wc.rel_path),
        sources=W.fetch_flags(),
        registry=config["resources"]["registry"],
    log:
        f"{R}/logs/resources/{{rel_path}}.log",
    localrule: True
    conda:
        CPU_ENV
    shell:
        "staticvec resources fetch --registry {params.registry} --group {params.member.group}"
        " --member {params.member.name:q} {params.sources} > {log} 2>&1"


rule fetch_group:
    # a whole registry entry (an evaluation set): verified together, marked done by a JSON file
    output:
        f"{W.download_dir}/.verified/{{group}}.json",
    params:
        sources=W.fetch_flags(),
        registry=config["resources"]["registry"],
    log:
        f"{R}/logs/resources/{{group}}.log",
    localrule: True
    conda:
        CPU_ENV
    shell:
        "staticvec resources fetch --registry {params.registry} --group {wildcards.group}"
        " {params.sources} --marker {output} > {log} 2>&1"
