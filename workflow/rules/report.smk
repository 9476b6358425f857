# The run manifest (provenance every table and figure carries), figures and summaries.

import json


rule run_manifest:
    input:
        corpus=W.manifest,
    output:
        W.run_manifest,
    params:
        config=json.dumps(config, sort_keys=True, default=str),
    log:
        f"{R}/logs/report/manifest.log",
    localrule: True
    conda:
        CPU_ENV
    shell:
        "staticvec report manifest --config-json {params.config:q} --corpus-manifest {input.corpus}"
        " --out {output} > {log} 2>&1"
