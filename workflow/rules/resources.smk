# External inputs: mirror first, then download; every file verified against the registry.


rule fetch_file:
    # one registry member (corpus files: one job each, so they are fetched in parallel)
    output:
        W.download_file(),
    wildcard_constraints:
        rel_path=r"(?!\.verified/).+",
    params:
        member=RF.fetch_member,
        sources=W.fetch_flags(),
        registry=W.registry_file,
    log:
        P.log("fetch_file"),
    localrule: True
    conda:
        CPU_ENV
    shell:
        "staticvec resources fetch --registry {params.registry} --group {params.member.group}"
        " --member {params.member.name:q} {params.sources} > {log} 2>&1"


rule fetch_group:
    # a whole registry entry (an evaluation set): verified together, marked done by a JSON file
    output:
        W.resource_marker("{group}"),
    params:
        sources=W.fetch_flags(),
        registry=W.registry_file,
    log:
        P.log("fetch_group"),
    localrule: True
    conda:
        CPU_ENV
    shell:
        "staticvec resources fetch --registry {params.registry} --group {wildcards.group}"
        " {params.sources} --marker {output} > {log} 2>&1"
