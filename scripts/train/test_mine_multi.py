"""Unit tests of mine_multi.py (the re-ranker's multi-definition miners) on
a small in-memory index: python3 scripts/train/test_mine_multi.py"""
import os
import re
import sqlite3
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mine_multi  # noqa: E402

K_MOD, K_CLASS, K_FUNC, K_METH = 0, 1, 2, 3


def package():
    """A package of three files: a parser module, a writer and its tests."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE chunks(id INTEGER PRIMARY KEY, file_id INTEGER, start_line INTEGER, "
               "end_line INTEGER, kind INTEGER, symbol TEXT, name TEXT, docstring TEXT, "
               "cont INTEGER)")
    db.execute("CREATE TABLE edges(src INTEGER, dst INTEGER, kind INTEGER)")
    files = {1: "csvkit/parser.py", 2: "csvkit/writer.py", 3: "tests/test_parser.py"}
    chunks = [
        (1, 1, 1, 3, K_MOD, "", "", "Reading records: see `parse_record` and `RecordReader`.", 0),
        (2, 1, 5, 20, K_FUNC, "parse_record",
         "parse_record", "Splits one line into fields; quoting is undone by unquote_field.", 0),
        (3, 1, 22, 30, K_FUNC, "unquote_field", "unquote_field", "", 0),
        (4, 1, 32, 60, K_CLASS, "RecordReader", "RecordReader",
         "Reads records one by one; see RecordReader.close and the writer's `close`.", 0),
        (5, 1, 40, 45, K_METH, "RecordReader.close", "close", "", 0),
        (6, 2, 1, 20, K_METH, "RecordWriter.close", "close", "", 0),
        (7, 2, 22, 30, K_FUNC, "record", "record", "", 0),
        (8, 3, 1, 10, K_FUNC, "test_quoted_fields_round_trip", "test_quoted_fields_round_trip",
         "", 0),
    ]
    db.executemany("INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?)", chunks)
    db.executemany("INSERT INTO edges VALUES (?,?,1)", [(8, 2), (8, 3), (8, 7)])
    rows = [(c[0], c[1], c[5], c[6], c[7], c[4]) for c in chunks if c[5]]
    spans = {(c[1], c[5]): (c[2], c[3]) for c in chunks if c[5]}
    return mine_multi.Package(db, files, spans, rows, is_test=lambda p: p.startswith("tests/"),
                              excluded=lambda p: None)


def symbols(gold):
    return sorted(g["symbol"] for g in gold)


class MineMultiTest(unittest.TestCase):
    def test_names_read_as_code_only(self):
        pkg = package()
        # "record" is an English word here, not written as code: not a name
        self.assertEqual(pkg.by_name["parse_record"], [2])  # once, though top-level
        cids, toks = pkg.named_in("Reads a record; see parse_record() and `unquote_field`.")
        self.assertEqual(sorted(toks), ["parse_record", "unquote_field"])
        self.assertEqual(sorted(cids), [2, 3])
        # a name of three definitions or more names none of them
        self.assertEqual(pkg.named_in("the `close` method")[0], [5, 6])

    def test_refs_gold_is_the_definition_and_what_it_names(self):
        qs = {q[0]: q for q in mine_multi.refs(package(), "")}
        text, gold, own = qs["Splits one line into fields; quoting is undone by unquote_field."]
        self.assertEqual(symbols(gold), ["parse_record", "unquote_field"])
        self.assertIn("unquote_field", own)
        # a dotted name is the one definition; a bare `close`, both of its own
        text, gold, own = [q for q in qs.values() if q[1][0]["symbol"] == "RecordReader"][0]
        self.assertEqual(symbols(gold), ["RecordReader", "RecordReader.close", "RecordWriter.close"])
        # another definition of its own name is not one it names
        pkg = package()
        k = [r[0] for r in pkg.rows].index(6)  # RecordWriter.close
        pkg.rows[k] = pkg.rows[k][:4] + ("Flushes, as the reader's `close` does not.", K_METH)
        pkg.by_id[6] = pkg.rows[k]
        self.assertEqual(pkg.named_in(pkg.rows[k][4])[0], [5, 6])
        self.assertEqual([q for q in mine_multi.refs(pkg, "") if q[1][0]["symbol"] ==
                          "RecordWriter.close"], [])

    def test_calls_gold_is_what_a_test_calls(self):
        (text, gold, own), = mine_multi.calls(package(), "")
        self.assertEqual(text, "quoted fields round trip")
        self.assertEqual(symbols(gold), ["parse_record", "record", "unquote_field"])

    def test_module_docstring_names_its_definitions(self):
        (text, gold, own), = mine_multi.module(package(), "")
        self.assertEqual(symbols(gold), ["RecordReader", "parse_record"])

    def test_sections_of_markdown_and_rest(self):
        md = "# Intro\ntext\n\n## Reading\nHow to read.\n\n```py\nr = RecordReader(f)\n" \
             "parse_record(line)\n```\n"
        self.assertEqual([h for h, _ in mine_multi.split_sections(md)], ["Intro", "Reading"])
        rst = "Reading\n=======\n\nUse ``RecordReader``::\n\n    parse_record(x)\n\nWriting\n-------\n"
        self.assertEqual([h for h, _ in mine_multi.split_sections(rst)], ["Reading", "Writing"])
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "README.md"), "w") as f:
                f.write(md)
            (text, gold, own), = mine_multi.section(package(), d)
        self.assertTrue(text.startswith("Reading. How to read."))
        self.assertEqual(symbols(gold), ["RecordReader", "parse_record"])

    def test_sentences_leave_out_code(self):
        doc = "Computes the sum. Then more.\nAnd a third.\n\n>>> sum([1])\n1\n"
        self.assertEqual(mine_multi.sentences(doc, 2), "Computes the sum. Then more.")
        self.assertFalse(re.search(">>>", mine_multi.sentences(doc, 5)))


if __name__ == "__main__":
    unittest.main()
