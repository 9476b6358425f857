"""Trainers: GloVe (``glove``), the gensim baselines Skip-gram, CBOW, fastText
(``gensim_baselines``) and the distillation trainers X2Static (``x2static``), BERT + Skip-gram
(``bert_skipgram``) and Context-to-Vec (``context2vec``) on one negative-sampling core
(``negative_sampling``); each writes its vectors with :class:`staticvec.embeddings.Embeddings`
and a JSON of its settings and training record beside them."""
