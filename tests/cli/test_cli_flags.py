"""What the user typed is what runs: a repeated option adds to the others, two options that
disagree are refused, an option that needs another says so, and every error names the
command line's own flags, before any work."""

from __future__ import annotations

import pytest

import counterfact as cf
from counterfact.cli import build_parser, main
from counterfact.cli._args import class_names, constraints_from_args, split_list

ERR = "counterfact: error: "
EXPLAIN = ["explain", "--dataset", "german_credit", "--model", "lr", "--rows", "0:4"]
AUDIT = ["audit", "--dataset", "german_credit", "--model", "lr", "--max-rows", "6"]


def _args(*argv: str):
    return build_parser().parse_args(list(argv))


def _error(capsys, argv) -> str:
    """The one error line of a run that must fail with status 2 (the parser's own errors
    exit)."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith(ERR)]
    assert code == 2 and len(lines) == 1, err
    return lines[0]


# ------------------------------------------------------------- 1. repeated list options
def test_a_repeated_feature_list_adds_to_the_others():
    args = _args(*EXPLAIN, "--immutable", "other_debtors", "--immutable", "telephone,age")
    assert set(constraints_from_args(args).immutable) == {"other_debtors", "telephone", "age"}
    args = _args(*EXPLAIN, "--vary", "age", "--vary", "credit_amount", "--increasing", "age")
    made = constraints_from_args(args)
    assert set(made.features_to_vary) == {"age", "credit_amount"}
    args = _args(*AUDIT, "--out", "x", "--groups", "a", "--groups", "b,c")
    assert split_list(args.groups) == ["a", "b", "c"]


def test_repeated_rows_and_class_names_add_up(capsys):
    assert main([*EXPLAIN[:-1], "0", "--rows", "1", "--all-rows", "--time-limit", "5"]) == 0
    assert "queries=2" in capsys.readouterr().out
    args = _args(*EXPLAIN, "--class-names", "0=no", "--class-names", "1=yes")
    assert class_names(args.class_names) == {0: "no", 1: "yes"}


# ---------------------------------------------------- 2. repeated --range and --allowed
def test_a_repeated_range_intersects_as_with_a_constraints_file(tmp_path):
    args = _args(*EXPLAIN, "--range", "credit_amount=:3000", "--range", "credit_amount=2000:")
    assert constraints_from_args(args).ranges["credit_amount"] == (2000.0, 3000.0)
    path = tmp_path / "c.yaml"
    path.write_text("ranges: {credit_amount: [null, 3000]}\n")
    args = _args(*EXPLAIN, "--constraints", str(path), "--range", "credit_amount=2000:")
    assert constraints_from_args(args).ranges["credit_amount"] == (2000.0, 3000)
    args = _args(
        *EXPLAIN,
        "--allowed",
        "purpose=car (new),radio/television",
        "--allowed",
        "purpose=radio/television,business",
    )
    assert constraints_from_args(args).allowed_values["purpose"] == ("radio/television",)


@pytest.mark.parametrize(
    "flags",
    [
        ["--range", "credit_amount=:1000", "--range", "credit_amount=2000:"],
        ["--allowed", "purpose=business", "--allowed", "purpose=education"],
    ],
)
def test_a_repeat_that_leaves_no_value_is_refused(capsys, flags):
    line = _error(capsys, [*EXPLAIN, *flags])
    assert "leave no value" in line and ("--range" in line or "--allowed" in line)


def test_a_file_and_a_flag_that_leave_no_value_get_the_same_message(capsys, tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("ranges: {credit_amount: [null, 1000]}\n")
    line = _error(capsys, [*EXPLAIN, "--constraints", str(path), "--range", "credit_amount=2000:"])
    assert "leave no value" in line


# ------------------------------------------------------------------- 5. audit --cost
def test_audit_offers_no_cost_that_no_option_can_supply(capsys):
    line = _error(capsys, [*AUDIT, "--out", "x", "--cost", "costs"])
    assert "invalid choice" in line
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    assert "costs: the" not in " ".join(capsys.readouterr().out.split())


# ------------------------------------------------------- 6. --global-* without --global
@pytest.mark.parametrize(
    "flags",
    [
        ["--global-features", "3"],
        ["--global-solver", "greedy"],
        ["--global-max-cost-ratio", "2"],
    ],
)
def test_global_options_need_global(capsys, tmp_path, flags):
    line = _error(capsys, [*AUDIT, "--out", str(tmp_path / "a"), *flags])
    assert flags[0] in line and "--global N" in line
    assert not (tmp_path / "a").exists()  # refused before any work


# ------------------------------------------------------------ 7. conflicting settings
@pytest.mark.parametrize(
    "flags, names",
    [
        (["--time-limit", "3", "--param", "time_limit=7"], ["--time-limit", "time_limit=7"]),
        (
            ["--method", "ceocl", "--solver", "highs", "--param", "solver=z3"],
            ["--solver", "solver=z3"],
        ),
        (["--seed", "1", "--param", "random_state=2"], ["--seed", "random_state=2"]),
        (["--model-file", "{model}"], ["--model lr", "--model-file"]),
        (["--test-size", "0.5", "--queries", "{model}"], ["--test-size", "--queries"]),
    ],
)
def test_options_that_disagree_are_both_named(capsys, tmp_path, flags, names):
    model = tmp_path / "m.joblib"
    model.write_text("never read")
    argv = [*EXPLAIN, *(f.format(model=model) for f in flags)]
    line = _error(capsys, argv)
    assert all(n in line for n in names), line


def test_test_size_with_data_is_refused(capsys, tmp_path):
    path = tmp_path / "own.csv"
    cf.datasets.load("german_credit").frame.iloc[:60].to_csv(path, index=False)
    line = _error(
        capsys, ["explain", "--data", str(path), "--target", "credit_risk", "--test-size", "0.5"]
    )
    assert "--test-size" in line and "--data" in line


def test_options_left_at_their_default_do_not_conflict(capsys):
    argv = [*EXPLAIN[:-1], "0:2", "--param", "time_limit=5", "--param", "random_state=0"]
    assert main([*argv, "-q", "--format", "json"]) == 0
    args = _args(*EXPLAIN)
    assert args.seed is None and args.test_size is None  # told from a value the user typed


# ------------------------------------------------------- 9. errors in the CLI's words
@pytest.mark.parametrize(
    "flags, says, not_says",
    [
        (["--min-group-size", "-1"], "--min-group-size", "Statistics("),
        (["--chunk-size", "0"], "--chunk-size", "Batch("),
        (["--n-bootstrap", "-1"], "--n-bootstrap", "Statistics("),
    ],
)
def test_audit_numbers_are_refused_in_the_flags_words(capsys, tmp_path, flags, says, not_says):
    line = _error(capsys, [*AUDIT, "--out", str(tmp_path / "a"), *flags])
    assert says in line and not_says not in line
    assert not (tmp_path / "a").exists()


def test_audit_target_class_is_named_as_the_flag(capsys, tmp_path):
    argv = [*AUDIT, "--method", "nearest", "--out", str(tmp_path / "a"), "--target-class", "7"]
    line = _error(capsys, argv)
    assert "--target-class '7'" in line and "target=" not in line


def test_demo_horizon_is_refused_before_any_work(capsys):
    code = main(["demo", "--horizon", "-1"])
    err = capsys.readouterr().err
    assert code == 2 and "--horizon" in err and "Timeline" not in err
    assert "loading German Credit" not in err


def test_a_missing_model_file_is_said_before_the_pickle_warning(capsys, tmp_path):
    line = _error(capsys, [*EXPLAIN[:3], "--model-file", str(tmp_path / "nofile.joblib")])
    assert "--model-file" in line and "no such file" in line and "unsafe" not in line


# ---------------------------------------------------------------- 10. class names
def test_target_class_takes_a_class_name(capsys):
    argv = [*EXPLAIN, "--time-limit", "5", "-q", "--target-class"]
    assert main([*argv, "good"]) == 0
    assert "wanted: good (1)" in capsys.readouterr().out
    assert main([*argv, "bad"]) == 0
    assert "wanted: bad (0)" in capsys.readouterr().out
    line = _error(capsys, [*argv, "great"])
    assert "good" in line and "[0, 1]" in line


def test_class_names_of_an_unknown_class_are_refused(capsys):
    line = _error(capsys, [*EXPLAIN, "--time-limit", "5", "-q", "--class-names", "5=no"])
    assert "--class-names" in line and "[0, 1]" in line


def test_own_class_names_keep_the_datasets_other_names(capsys):
    argv = [*EXPLAIN, "--time-limit", "5", "-q", "--class-names", "0=rejected"]
    assert main(argv) == 0
    assert "wanted: good (1)" in capsys.readouterr().out


# --------------------------------------------------------------- 11. method choices
def test_every_listed_method_is_a_choice(capsys):
    listed = list(cf.methods.classes(available=False, peers=True))
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for command in ("explain", "audit"):
        action = next(a for a in sub.choices[command]._actions if "--method" in a.option_strings)
        assert action.choices == listed
    missing = [n for n in listed if n not in cf.methods.names(peers=True)]
    for name in missing:  # a peer whose package is missing: how to install it, before any work
        line = _error(capsys, [*EXPLAIN, "--method", name])
        assert f"--method {name}" in line and "pip install" in line
