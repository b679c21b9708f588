"""The explorer's document and page: every stage, the code, the passes and the schedule steps."""

from __future__ import annotations

import json
import re

import pytest

import sparsetir
from sparsetir.explorer import Exploration, explore
from sparsetir.explorer.document import build_document, step_text
from sparsetir.explorer.exploration import pick_function
from sparsetir.explorer.page import render_page
from sparsetir.schedule import Schedule
from sparsetir.transforms import pipeline
from explorer_helpers import CHECKOUT, example_function, example_history, example_text, line_of, page_document, pane_text


@pytest.fixture(scope="module")
def document():
    return build_document(example_function(), example_text(), example_history())


def _origins(document, pane_id, needle):
    pane = document["panes"][pane_id]
    rows = pane_text(document, pane_id).splitlines()
    return next(pane["origins"][k] for k, row in enumerate(rows) if needle in row)


def test_a_view_per_step_with_every_stage_and_the_code(document):
    history = example_history()
    assert len(document["views"]) == len(history) + 1
    assert [s["text"].split("(")[0] for s in document["steps"]] == [s.primitive for s in history]
    assert document["start_stage"] == "I" and document["steps_note"] is None and document["steps_error"] is None
    for view in document["views"]:
        for kind in ("stage1", "stage2", "stage3", "code"):
            assert document["panes"][view[kind]]["lines"], kind
    first, last = document["views"][0], document["views"][-1]
    assert [p["name"] for p in first["passes"]] == [p.name for p in pipeline.PASSES]
    assert last["passes"] == []  # at stage III nothing is left to run
    assert "define" in pane_text(document, first["code"])
    assert "T.vectorized" in pane_text(document, last["stage3"]) and "T.parallel" in pane_text(document, last["stage3"])
    assert "T.vectorized" not in pane_text(document, first["stage3"])


def test_lines_are_linked_to_the_script(document):
    view = document["views"][0]
    update, init, header = line_of("C[i, k] = C[i, k] +"), line_of("T.float32(0)"), line_of("T.sp_iter")
    assert _origins(document, view["stage3"], "c[vi, vk] = c[vi, vk] +") == [update]
    assert _origins(document, view["stage2"], 'T.sblock("csr_spmm1")') == [header, update]
    code = document["panes"][view["code"]]
    assert {n for o in code["origins"] for n in o} == {init, update, line_of("with T.init()")}
    script = document["panes"][document["script"]]
    assert script["origins"][update - 1] == [update]


def test_diffs_of_passes_and_steps(document):
    split = document["steps"][1]
    assert split["text"] == 'split(loop=loop("csr_spmm1", 1), factors=[None, 8], preserve_unit_iters=True, disable_predication=False)'
    assert split["stage"] == "II"
    added = [document["lines"][line] for op, line, _ in split["diff"] if op == "+"]
    assert any("k_1" in line for line in added)
    assert split["diff"][0][0] == "@" and split["diff"][0][1].startswith("@@ -")
    decompose = document["views"][0]["passes"][1]
    assert decompose["name"] == "auto_decompose_reduction" and decompose["stages"] == ["II", "II"]
    assert any("csr_spmm1_init" in document["lines"][line] for op, line, _ in decompose["diff"] if op == "+")
    unchanged = document["views"][0]["passes"][2]  # bound_cache_extents: nothing to bound here
    assert unchanged["diff"] == []


def test_a_program_that_starts_at_stage_ii_has_no_stage_i():
    stage2 = sparsetir.lower_sparse_iter(example_function())
    exploration = explore(stage2, default_schedule=False)
    doc = exploration.document
    assert doc["start_stage"] == "II" and not doc["editable"]
    view = doc["views"][0]
    assert doc["panes"][view["stage1"]]["note"] == "The program starts at stage II: there is no stage I."
    assert [p["name"] for p in view["passes"]] == [p.name for p in pipeline.PASSES if p.reads == 2]
    assert "c[vi, vk] = c[vi, vk] +" in pane_text(doc, view["stage3"])
    assert doc["steps_note"].startswith("No schedule steps")


def test_a_program_without_a_schedule_shows_the_default_schedule_steps():
    stage2 = sparsetir.lower_sparse_iter(example_function())
    doc = explore(stage2).document
    assert doc["steps_note"].startswith("The default CPU schedule")
    assert [s["primitive"] for s in doc["steps"]] == ["partition_rows"]  # the width stays symbolic
    specialized = explore(example_function().specialize({"feat_size": 32})).document
    primitives = [s["primitive"] for s in specialized["steps"]]
    assert primitives[:2] == ["lower_sparse_iter", "partition_rows"] and "cache_write" in primitives
    assert "T.vectorized(16)" in pane_text(specialized, specialized["views"][-1]["stage2"])


def test_explore_a_schedule_shows_its_steps_and_is_editable_from_its_file():
    func = sparsetir.parse_file("examples/csr_spmm.py")
    sch = Schedule(func)
    sch.lower_sparse_iter()
    sch.parallel(sch.get_loops(sch.get_sblock("csr_spmm0"))[0])
    exploration = explore(sch)
    assert [s["primitive"] for s in exploration.document["steps"]] == ["lower_sparse_iter", "parallel"]
    assert exploration.script is not None and exploration.script.name == "examples/csr_spmm.py"
    assert "T.parallel" in pane_text(exploration.document, exploration.document["views"][-1]["stage2"])


def test_a_program_parsed_from_text_needs_its_source_given():
    text = example_text()
    func = sparsetir.parse(text)  # "<script>": no file to read the text from
    assert explore(func).document["panes"][explore(func).document["script"]]["note"] == "the script text is not available"
    given = explore(func, source=text)
    assert pane_text(given.document, given.document["script"]).splitlines()[0] == text.splitlines()[0]


def test_cuda_code_for_a_gpu_target():
    sch = Schedule(example_function(), round_trip=False)
    sch.lower_sparse_iter()
    (i,) = sch.get_loops(sch.get_sblock("csr_spmm0"))
    sch.bind(i, "blockIdx.x")
    j, k = sch.get_loops(sch.get_sblock("csr_spmm1"))
    sch.bind(k, "threadIdx.x")
    doc = build_document(sch.initial, example_text(), sch.history, target="cuda")
    assert doc["code_format"] == "cuda"
    last, first = doc["views"][-1], doc["views"][0]
    assert "__global__" in pane_text(doc, last["code"])
    # Nothing bound yet: the default GPU schedule gives blocks of 256 threads, one per row.
    unscheduled = pane_text(doc, first["code"])
    assert "__launch_bounds__(256)" in unscheduled and "__launch_bounds__(256)" not in pane_text(doc, last["code"])
    # CUDA C is linked through marked stores (trace/code.py): each store to its script line
    update, init = line_of("C[i, k] = C[i, k] +"), line_of("T.float32(0)")
    assert _origins(doc, last["code"], "] = (c_ptr[") == [update]
    assert set(_origins(doc, last["code"], "] = 0x0p+0f")) == {init, line_of("with T.init()")}


def test_step_text_names_handles():
    history = example_history()
    assert step_text(history[0]) == "lower_sparse_iter()"
    assert step_text(history[2]) == 'reorder(ordered_loops=[loop("csr_spmm1", 1), loop("csr_spmm1", 0), loop("csr_spmm1", 2)])'


def test_the_page_loads_nothing_and_no_script_text_can_end_its_data():
    text = example_text().replace("# C = A @ B", "# </script><script>alert(1)</script> C = A @ B")
    func = sparsetir.parse(text, "examples/csr_spmm.py")
    page = Exploration(build_document(func, text)).html()
    assert page.count("</script>") == 2  # the data element and the app, nothing from the script
    assert "alert(1)" in page_document(page)["script_text"]
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src 'none'" in csp and "connect-src" not in csp
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page)
    assert "@import" not in page and "url(" not in page


def test_the_jupyter_view_is_the_page_in_an_iframe():
    exploration = Exploration(build_document(example_function(), example_text()))
    frame = exploration._repr_html_()
    assert frame.startswith("<iframe srcdoc=\"") and "&lt;!DOCTYPE html&gt;" in frame
    assert render_page(exploration.document).startswith("<!DOCTYPE html>")


def test_an_edited_script_shows_the_function_of_that_name_else_its_only_or_first_one():
    assert pick_function({"mine": 1}, "csr_spmm") == ("mine", None)  # renamed in the editor
    assert pick_function({"a": 1, "b": 2}, "b") == ("b", None)
    assert pick_function({"a": 1, "b": 2}, None) == ("a", None)
    assert pick_function({"a": 1, "b": 2}, "c") == ("a", "the script has no function 'c' any more: showing 'a', its first")


def test_with_t_init_links_to_the_init_block_and_its_store(document):
    view = document["views"][0]
    init, store, update = line_of("with T.init()"), line_of("T.float32(0)"), line_of("C[i, k] = C[i, k] +")
    iteration = line_of("T.sp_iter")
    assert _origins(document, view["stage1"], "with T.init():") == [iteration, init]
    assert _origins(document, view["stage2"], "with T.init():") == [iteration, init]
    assert _origins(document, view["stage2"], "C[vi, vk] = T.float32(0)") == [init, store]
    assert _origins(document, view["stage3"], 'T.sblock("csr_spmm1_init")') == [iteration, init, store]
    assert _origins(document, view["stage3"], "c[vi, vk] = T.float32(0.0)") == [init, store]
    assert _origins(document, view["stage3"], "c[vi, vk] = c[vi, vk] +") == [update]  # the update is no init
    code = document["panes"][view["code"]]
    assert {n for o in code["origins"] for n in o} == {init, store, update}


def test_a_step_diffs_stage_iii_and_the_generated_code_against_the_step_before(document):
    lower, split = document["steps"][0], document["steps"][1]
    assert lower["primitive"] == "lower_sparse_iter" and lower["code_diff"] == [] and lower["stage3_diff"] == []
    ops = {op for op, _, _ in split["code_diff"]}
    assert ops == {"@", " ", "+", "-"}
    assert any("k_1" in document["lines"][line] for op, line, _ in split["stage3_diff"] if op == "+")


def test_the_served_page_carries_the_editor_and_the_export_does_not(document):
    served = render_page({**document, "editable": True}, served=True)
    exported = render_page(document)
    assert "var SparsetirEditor=" in served and "var SparsetirEditor=" not in exported
    assert len(served) - len(exported) > 300_000  # CodeMirror: in the served page only
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", served)  # the bundle loads nothing either


def test_the_editor_bundle_names_the_license_of_everything_in_it():
    tools = CHECKOUT / "tools" / "explorer-editor"
    static = CHECKOUT / "sparsetir" / "explorer" / "static"
    pinned = json.loads((tools / "package.json").read_text())["dependencies"]
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", version) for version in pinned.values())  # a rebuild is the same
    licenses = (static / "editor.LICENSES.txt").read_text()
    for name, version in pinned.items():
        assert f"{name} {version} (MIT)" in licenses
    assert "Permission is hereby granted, free of charge" in licenses
    bundle = (static / "editor.js").read_text()
    assert bundle.startswith("var SparsetirEditor=") and "</script" not in bundle.lower()
