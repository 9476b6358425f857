"""The WordNet lexicon: a hand-made database, and our reader of the real one against NLTK's."""

import warnings
from pathlib import Path

import pytest

from staticvec.errors import InputFileError
from staticvec.post.wordnet import read_synsets, wordnet_lexicon

WORDNET = Path("../shared/data/eval/wordnet")
needs_wordnet = pytest.mark.skipif(not (WORDNET / "data.noun").exists(), reason=f"{WORDNET} not available")

HEADER = "  1 This software and database is being provided to you, the LICENSEE, by  \n"


@pytest.fixture
def tiny(tmp_path):
    files = {
        "data.noun": "00000001 06 n 02 car 0 Auto 0 001 ~ 00000002 n 0000 | a motor vehicle\n"
        "00000002 06 n 02 cab 0 taxicab 0 002 @ 00000001 n 0000 + 00000009 v 0101 | a car for hire\n"
        "00000003 15 n 03 new_york 0 big_apple 0 1st 0 000 | a city\n",
        "data.verb": "00000009 38 v 01 cab 0 001 + 00000002 n 0101 01 + 02 00 | ride in a taxicab\n",
        "data.adj": "00000004 00 s 02 handy 0 ready(p) 0 000 | easy to reach\n",
        "data.adv": "",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(HEADER + text)
    return tmp_path


def test_tiny_database(tiny):
    synsets = read_synsets(tiny)
    assert synsets[("n", "00000002")] == (["cab", "taxicab"], [("n", "00000001")])
    assert synsets[("a", "00000004")][0] == ["handy", "ready"]  # syntactic marker stripped
    assert wordnet_lexicon(tiny) == {
        "car": ["auto"], "auto": ["car"], "cab": ["taxicab"], "taxicab": ["cab"], "handy": ["ready"], "ready": ["handy"],
    }  # the verb "cab" has no other lemma; multi-word and digit lemmas left out
    plus = wordnet_lexicon(tiny, "synonyms+")
    assert plus["car"] == ["auto", "cab", "taxicab"] and plus["cab"] == ["auto", "car", "taxicab"]
    assert wordnet_lexicon(tiny, multiword=True)["new_york"] == ["big_apple"]


def test_missing_or_bad_database(tmp_path, tiny):
    with pytest.raises(InputFileError, match="data.noun"):
        read_synsets(tmp_path / "nowhere")
    (tiny / "data.verb").write_text(HEADER + "00001740 29 v 0x breathe 0 000 | gloss\n")
    with pytest.raises(InputFileError, match="data.verb, line 2"):
        read_synsets(tiny)
    (tiny / "data.verb").write_text(HEADER + "00001740 29 v 01 breathe 0 002 @ 00000001 n 0000 | gloss\n")
    with pytest.raises(InputFileError, match="fewer pointers"):
        read_synsets(tiny)


def nltk_reader():
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class LocalWordNet(WordNetCorpusReader):
        def map_wn(self, version="wordnet"):  # NLTK would load its own WordNet copy to map versions
            return None

    nltk.data.path.append(str(WORDNET.resolve()))  # NLTK only reads directories on its data path
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return LocalWordNet(str(WORDNET.resolve()), None)


@pytest.fixture(scope="module")
def real_synsets():
    return read_synsets(WORDNET)


@needs_wordnet
def test_real_lexicon_is_symmetric_and_has_the_classic_synonyms(real_synsets):
    plus = wordnet_lexicon(WORDNET, "synonyms+", synsets=real_synsets)
    assert {"auto", "automobile", "machine", "motorcar", "cab", "convertible"} <= set(plus["car"])
    for head, neighbours in list(plus.items())[::50]:  # synonymy and hypernymy/hyponymy are mutual
        assert head not in neighbours and head == head.lower() and "_" not in head
        assert all(head in plus[n] for n in neighbours)


@needs_wordnet
@pytest.mark.slow  # NLTK's reader takes seconds to load its indexes
def test_real_database_matches_nltk(real_synsets):
    try:
        wn = nltk_reader()
    except Exception as exc:  # an NLTK version whose reader cannot be pointed at a directory
        pytest.skip(f"NLTK's WordNet reader unavailable here: {exc}")
    for pos, offset in sorted(real_synsets)[::97]:
        synset = wn.synset_from_pos_and_offset(pos, int(offset))
        lemmas, related = real_synsets[(pos, offset)]
        assert lemmas == synset.lemma_names(), synset
        theirs = synset.hypernyms() + synset.instance_hypernyms() + synset.hyponyms() + synset.instance_hyponyms()
        assert sorted(related) == sorted((s.pos().replace("s", "a"), f"{s.offset():08d}") for s in theirs), synset
