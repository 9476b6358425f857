"""Co-occurrence stores: one sparse on-disk format for every co-occurrence source.

``store``  — the file format (sorted ``(i, j, x)`` records + JSON header), its reader, a
             bounded-memory accumulator for arbitrary triples, and the bounded-fan-in merge;
``window`` — GloVe's window counts (1/d weights, symmetric, per line, OOV removed first).
"""
