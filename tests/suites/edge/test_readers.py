"""Readers: CoNLL-U (multi-word tokens, empty nodes), jiant edge-probing JSON, SemEval 2010-8."""

from __future__ import annotations

import pytest

from suites.edge import read_conllu, read_jiant, read_semeval
from suites.tasks import TaskError

CONLLU = """# sent_id = 1
# text = They didn't go.
1\tThey\tthey\tPRON\tPRP\t_\t4\tnsubj\t_\t_
2-3\tdidn't\t_\t_\t_\t_\t_\t_\t_\t_
2\tdid\tdo\tAUX\tVBD\t_\t4\taux\t_\t_
3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_
4\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\tSpaceAfter=No
4.1\twent\tgo\tVERB\tVBD\t_\t_\t_\t4:conj\t_
5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_

# sent_id = 2
1\tGonna\tgo\tVERB\tVBG\t_\t0\troot\t_\tSpaceAfter=No
2\t!\t!\tPUNCT\t.\t_\t1\tpunct\t_\t_

"""


@pytest.fixture
def conllu(tmp_path):
    path = tmp_path / "toy-dev.conllu"
    path.write_text(CONLLU)
    return path


def words(task):
    return [
        (t[s:e], y) for t, ((s, e),), y in task.frame.select("text", "spans", "label").iter_rows()
    ]


def test_upos_with_multiword_tokens_and_empty_nodes(conllu):
    task = read_conllu(conllu, "upos")
    assert words(task) == [
        ("They", "PRON"),
        ("did", "AUX"),
        ("n't", "PART"),
        ("go", "VERB"),
        (".", "PUNCT"),
        ("Gonna", "VERB"),
        ("!", "PUNCT"),
    ]
    assert task.frame["split"].unique().to_list() == ["dev"]  # from the file name
    assert task.frame["text"][5] == "Gonna!"  # rebuilt from SpaceAfter=No without `# text`
    assert task.phenomenon_type == "morphology"


def test_multiword_token_whose_parts_do_not_spell_it(tmp_path):
    path = tmp_path / "mwt.conllu"
    path.write_text(
        "# text = del mar\n1-2\tdel\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "1\tde\tde\tADP\t_\t_\t3\tcase\t_\t_\n2\tel\tel\tDET\t_\t_\t3\tdet\t_\t_\n"
        "3\tmar\tmar\tNOUN\t_\t_\t0\troot\t_\t_\n\n"
    )
    assert words(read_conllu(path, "upos")) == [("del", "ADP"), ("del", "DET"), ("mar", "NOUN")]


def test_deprel_spans_are_head_then_dependent(conllu):
    task = read_conllu(conllu, "deprel")
    rows = [
        (t[a:b], t[c:d], y)
        for t, ((a, b), (c, d)), y in task.frame.select("text", "spans", "label").iter_rows()
    ]
    assert rows == [
        ("go", "They", "nsubj"),
        ("go", "did", "aux"),
        ("go", "n't", "advmod"),
        ("go", ".", "punct"),
        ("Gonna", "!", "punct"),
    ]
    assert task.input_type == "span pair"


def test_arc_negatives_are_seeded_non_arcs(conllu):
    a, b = read_conllu(conllu, "arc", seed=1), read_conllu(conllu, "arc", seed=1)
    assert a.frame.equals(b.frame)
    labels = a.frame["label"].to_list()
    assert labels.count("arc") == 5 and labels.count("none") == 5
    arcs = {
        tuple(map(tuple, s)) for s, y in a.frame.select("spans", "label").iter_rows() if y == "arc"
    }
    negatives = [
        tuple(map(tuple, s)) for s, y in a.frame.select("spans", "label").iter_rows() if y == "none"
    ]
    assert not arcs & set(negatives)


def test_malformed_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.conllu"
    path.write_text("# text = A b\n1\tA\ta\tDET\n")
    with pytest.raises(TaskError, match=r"bad.conllu:2: 4 tab-separated columns"):
        read_conllu(path)


def test_text_and_forms_disagree(tmp_path):
    path = tmp_path / "bad.conllu"
    path.write_text(
        "# text = A b\n1\tA\ta\tDET\t_\t_\t2\tdet\t_\t_\n2\tc\tc\tNOUN\t_\t_\t0\troot\t_\t_\n"
    )
    with pytest.raises(TaskError, match=r"token 'c' not found"):
        read_conllu(path)


def test_jiant_fixture(samples):
    task = read_jiant(samples.path("jiant-edge-example", "train"))
    assert task.target_type == "multilabel"
    text, spans, label = task.frame.select("text", "spans", "label").row(1)
    assert [text[s:e] for s, e in spans] == ["suggests", "This"]
    assert label == ["existed_during", "instigation", "manipulated_by_another"]
    assert task.targets.shape == (len(task), len(task.labels))


def test_jiant_bad_span(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "a b", "targets": [{"span1": [1, 5], "label": "x"}]}\n')
    with pytest.raises(TaskError, match=r"bad.jsonl:1: span \[1, 5\] is outside the 2 tokens"):
        read_jiant(path)


def test_semeval(tmp_path):
    path = tmp_path / "TRAIN_FILE.TXT"
    path.write_text(
        '1\t"The <e1>author</e1> of a keygen uses a <e2>disassembler</e2>."\n'
        "Instrument-Agency(e2,e1)\nComment:\n\n"
        '2\t"The <e1>child</e1> was put in the <e2>cradle</e2>."\nOther\nComment:\n\n'
    )
    task = read_semeval(path)
    text, spans, label = task.frame.select("text", "spans", "label").row(0)
    assert text == "The author of a keygen uses a disassembler."
    assert [text[s:e] for s, e in spans] == ["author", "disassembler"]
    assert label == "Instrument-Agency(e2,e1)" and task.labels == (
        "Instrument-Agency(e2,e1)",
        "Other",
    )
    path.write_text('1\t"No tags here."\nOther\nComment:\n\n')
    with pytest.raises(TaskError, match=r"TRAIN_FILE.TXT:1: needs one <e1>"):
        read_semeval(path)


def test_semeval_real_file(samples):
    task = read_semeval(samples.path("semeval-2010-task8", "test"))
    # the shipped slice: the first 500 test sentences, 18 of the 19 relations (the rarest,
    # Entity-Destination(e2,e1), occurs once in the whole test set)
    assert len(task) == 500 and len(task.labels) == 18 and task.frame["split"][0] == "test"
