"""Trainers: GloVe (``glove``), the gensim baselines Skip-gram, CBOW, fastText
(``gensim_baselines``), Model2Vec (``model2vec``) and the distillation students X2Static
(``x2static``), BERT + Skip-gram (``bert_skipgram``) and Context-to-Vec (``context2vec``).

The students share one core, one module per idea: what a method provides (``student``: the
interface), negative sampling and its loss (``negative_sampling``), the optimiser
(``optimizer``), the training loop with checkpoints (``loop``), the fast engine's numba kernels
(``kernels``), the teacher features as blocks (``teacher_blocks``) and the Python API
(``api.train_student``, which ``staticvec train <student>`` wraps). Each trainer writes its vectors
with :class:`staticvec.embeddings.Embeddings` and a JSON of its settings and training record beside
them."""
