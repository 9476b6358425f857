# Post-processing of any embedding: retrofitting to lexicons (Faruqui et al.; Context-to-Vec's
# Student-t graph retrofitting) and Artetxe et al.'s transform. An embedding <name> post-processed
# by a step is <name>+<step>: <name>+faruqui-ppdb, <name>+student-t-wordnet, <name>+artetxe-0.50.
# Names and options come from staticvec.post.targets; rules producing <name>.npy elsewhere must
# not let <name> match these suffixes (their wildcard constraints exclude "+").

import re

from staticvec.post import targets as post_targets

POST_EMB = f"{R}/embeddings"


wildcard_constraints:
    lexicon="|".join(map(re.escape, config["post"]["lexicons"])),
    method="faruqui|student-t",
    alpha=r"-?\d+\.\d\d",
    relations=r"synonyms\+?",


rule post_wordnet_lexicon:
    input:
        f"{post_targets.wordnet_dir(config)}/data.noun",
    output:
        f"{R}/post/lexicons/wordnet-{{relations}}.txt",
    params:
        wordnet_dir=post_targets.wordnet_dir(config),
        options=post_targets.wordnet_options(config),
    log:
        "logs/post/wordnet-{relations}.log",
    benchmark:
        f"{R}/benchmarks/post/wordnet-{{relations}}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    shell:
        "staticvec post wordnet-lexicon --wordnet-dir {params.wordnet_dir} --relations '{wildcards.relations}' {params.options} --out '{output}' > '{log}' 2>&1"


rule post_retrofit:
    input:
        vectors=f"{POST_EMB}/{{name}}.npy",
        vocab=f"{POST_EMB}/{{name}}.vocab",
        lexicon=lambda wc: post_targets.lexicon_file(config, wc.lexicon, R),
    output:
        vectors=f"{POST_EMB}/{{name}}+{{method}}-{{lexicon}}.npy",
        vocab=f"{POST_EMB}/{{name}}+{{method}}-{{lexicon}}.vocab",
        report=f"{POST_EMB}/{{name}}+{{method}}-{{lexicon}}.retrofit.json",
    params:
        options=lambda wc: post_targets.retrofit_options(config, wc.method),
    log:
        "logs/post/{name}+{method}-{lexicon}.log",
    benchmark:
        f"{R}/benchmarks/post/{{name}}+{{method}}-{{lexicon}}.tsv"
    threads: 1
    resources:
        mem_mb=6000,
        runtime=30,
    shell:
        "staticvec post retrofit --vectors '{input.vectors}' --lexicon '{input.lexicon}' {params.options} --out '{output.vectors}' --report '{output.report}' > '{log}' 2>&1"


rule post_artetxe:
    input:
        vectors=f"{POST_EMB}/{{name}}.npy",
        vocab=f"{POST_EMB}/{{name}}.vocab",
    output:
        vectors=f"{POST_EMB}/{{name}}+artetxe{{alpha}}.npy",
        vocab=f"{POST_EMB}/{{name}}+artetxe{{alpha}}.vocab",
    params:
        options=post_targets.artetxe_options(config),
    log:
        "logs/post/{name}+artetxe{alpha}.log",
    benchmark:
        f"{R}/benchmarks/post/{{name}}+artetxe{{alpha}}.tsv"
    threads: 2
    resources:
        mem_mb=6000,
        runtime=20,
    shell:
        "staticvec post artetxe --vectors '{input.vectors}' --alpha {wildcards.alpha} {params.options} --out '{output.vectors}' > '{log}' 2>&1"
