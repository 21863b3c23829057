"""Readers of data formats more than one suite reads: CoNLL-U (`conllu`), SemEval-2010 Task 8
(`semeval`), JSON lines (`jsonl`), the curriculum NLI files (`curriculum_nli`), and UTF-8 text
files with errors that name the file and line (`text_files`). A suite's own formats stay in the
suite (edge's jiant files, the Holmes release)."""
