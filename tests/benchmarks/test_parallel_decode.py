"""The parallel-decode benchmark runs on the embedded model; its figures come from the script."""

from __future__ import annotations

import pytest

from benchmarks import parallel_decode


def test_benchmark_times_each_size_on_the_embedded_model(capsys: pytest.CaptureFixture[str]):
    assert parallel_decode.main(["--sizes", "1,3", "--steps", "2", "--repeats", "1"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| sequences")
    sizes = [row.split("|")[1].strip() for row in rows[1:]]
    assert sizes == ["1", "3"]
    assert rows[1].rstrip().endswith("| 1.00 |")  # one sequence against itself
    assert float(rows[2].split("|")[2].strip().removesuffix(" ms")) > 0


def test_sequences_leave_no_cells_behind():
    import llama_cpp

    llm = parallel_decode.load(3)
    try:
        assert len(parallel_decode.step_seconds(llm, 3, 2)) == 2
        memory = llama_cpp.llama_get_memory(llm._ctx.ctx)
        assert [llama_cpp.llama_memory_seq_pos_max(memory, s) for s in range(3)] == [-1] * 3
    finally:
        llm.close()


@pytest.mark.parametrize(
    "argv",
    [["--sizes", "0"], ["--sizes", "9"], ["--sizes", "two"], ["--steps", "0"], ["--repeats", "99"]],
)
def test_bad_settings_are_refused(argv: list[str]):
    with pytest.raises(SystemExit) as caught:
        parallel_decode.main(argv)
    assert caught.value.code == 2
