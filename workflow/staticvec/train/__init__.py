"""Trainers: GloVe (``glove``) and the gensim baselines Skip-gram, CBOW, fastText
(``gensim_baselines``); each writes its vectors with :class:`staticvec.embeddings.Embeddings`
and a JSON of its settings and training record beside them."""
