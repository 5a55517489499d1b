"""An ONNX file as a classifier: :class:`OnnxModel` runs it with onnxruntime.

An ONNX file is data -- a graph of standard operators and their weights -- so
reading it executes nothing its author wrote: it is the safe way to hand a
model to the command line or the server (no ``--allow-unsafe-model-load``).
Reading the graph needs only the ``onnx`` package (the model compiler reads
it, :mod:`counterfact.models._compile._onnx`); predictions need
``onnxruntime``, imported on the first prediction.

How the graph receives a row:

* **one input per column** (what skl2onnx writes for a pipeline fitted on a
  DataFrame): every input is named after a schema feature and receives that
  column, converted to the input's element type (strings for text
  categories, int64, float or double);
* **one input tensor** (a network, a model fitted on an array): its columns
  are the schema's features by position, in schema order (the order of the
  DataFrame the model sees).

Which graph output holds the probabilities: the one a ``ZipMap`` reads (the
map is skipped: its input tensor is fetched instead), else the float tensor
output beside a label output, else the only output; a network's logits are
turned into probabilities with a softmax (a sigmoid for one logit) unless the
graph ends with one itself.  The class labels come from the graph (``ZipMap``
labels, the classifier operator's labels, the label lookup of a network) or
the ``classes`` argument; ``predict`` is the graph's own label output where it
has one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._utils._deps import import_optional
from ..exceptions import UnsupportedModelError, ValidationError

__all__ = ["TREE_OPERATORS", "OnnxModel", "OnnxTreeModel"]

#: the ONNX-ML tree operators: a graph holding one is an :class:`OnnxTreeModel`
TREE_OPERATORS = ("TreeEnsembleClassifier", "TreeEnsembleRegressor")
#: the ONNX-ML classifier operators, whose second output is the class scores
_CLASSIFIERS = ("TreeEnsembleClassifier", "LinearClassifier", "SVMClassifier")
#: onnx element type -> the numpy dtype a column is converted to
_NUMPY_TYPES = {1: np.float32, 11: np.float64, 7: np.int64, 6: np.int32, 8: object, 9: np.bool_}
#: operators that leave the values of their (first) input unchanged
_PASS = ("Identity", "Cast", "Reshape", "Flatten", "Normalizer")


def _read_proto(source: Any) -> Any:
    """The ``onnx.ModelProto`` of a path, bytes or a ``ModelProto``."""
    onnx = import_optional("onnx", purpose="Reading an ONNX model")
    if isinstance(source, onnx.ModelProto):
        return source
    if isinstance(source, bytes | bytearray):
        return onnx.load_from_string(bytes(source))
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise ValidationError(f"The ONNX file {str(path)!r} does not exist.")
        try:
            return onnx.load(str(path))
        except Exception as exc:  # a parser error of any kind: not an ONNX file
            detail = " ".join(str(exc).split())[:200]
            raise ValidationError(
                f"{str(path)!r} is not an ONNX model file ({type(exc).__name__}: {detail}); "
                "write it with skl2onnx, onnxmltools or torch.onnx.export."
            ) from None
    raise ValidationError(
        "OnnxModel needs a path to an .onnx file, its bytes or an onnx.ModelProto. "
        f"Got {type(source).__name__}."
    )


def _attribute(node: Any, name: str, default: Any = None) -> Any:
    import onnx

    for a in node.attribute:
        if a.name == name:
            value = onnx.helper.get_attribute_value(a)
            if isinstance(value, list) and value and isinstance(value[0], bytes):
                return [v.decode() for v in value]
            return value.decode() if isinstance(value, bytes) else value
    return default


class OnnxModel:
    """A classifier stored as an ONNX graph, run with onnxruntime.

    Parameters
    ----------
    source : str, path-like, bytes or onnx.ModelProto
        The ``.onnx`` file (or its contents, or the loaded graph).
    classes : sequence, optional
        The class labels of the probability columns, for graphs that do not
        name them (a network exported from PyTorch); default: the labels the
        graph holds, else ``0 .. k-1``.

    Attributes
    ----------
    proto : onnx.ModelProto
        The graph.
    classes_ : ndarray
        The class labels, in the order of the probability columns.
    feature_names_in_ : ndarray
        The input names, for a graph with one input per column (absent for a
        graph with one input tensor, whose columns are taken by position).

    Notes
    -----
    The module docstring of :mod:`counterfact.models._onnx_adapter` says how
    rows are fed and which output is read.  Constructing one reads the graph
    only; the onnxruntime session is created on the first prediction.  A graph
    whose estimator is a tree ensemble is an :class:`OnnxTreeModel`.
    """

    def __new__(cls, source: Any, classes: Any = None) -> OnnxModel:
        proto = _read_proto(source)
        if cls is OnnxModel and any(n.op_type in TREE_OPERATORS for n in proto.graph.node):
            cls = OnnxTreeModel
        obj = super().__new__(cls)
        obj.proto = proto
        return obj

    def __init__(self, source: Any, classes: Any = None) -> None:
        graph = self.proto.graph
        init = {t.name for t in graph.initializer}
        self._inputs = [
            (i.name, i.type.tensor_type.elem_type, len(i.type.tensor_type.shape.dim))
            for i in graph.input
            if i.name not in init
        ]
        if not self._inputs:
            raise ValidationError("The ONNX graph has no input.")
        if len(self._inputs) > 1:
            self.feature_names_in_ = np.array([name for name, _, _ in self._inputs], dtype=object)
        self._producer = {o: n for n in graph.node for o in n.output}
        self.probability_output, self.label_output = self._outputs()
        self._transform = self._probability_transform()
        self.classes_ = self._classes(classes)
        self._session: Any = None

    # ---------------------------------------------------------------- reading the graph
    def _outputs(self) -> tuple[str, str | None]:
        """The tensor holding the scores (a ZipMap's input) and the label output."""
        outputs = list(self.proto.graph.output)
        labels = [o.name for o in outputs if o.type.tensor_type.elem_type in (7, 8)]
        label = labels[0] if len(outputs) > 1 and labels else None
        for o in outputs:
            node = self._producer.get(o.name)
            if node is not None and node.op_type == "ZipMap":
                return node.input[0], label
        scores = [o.name for o in outputs if o.name != label and o.type.HasField("tensor_type")]
        if len(scores) != 1:
            raise UnsupportedModelError(
                "The ONNX graph has no single output holding class scores (its outputs: "
                f"{[o.name for o in outputs]}); export the classifier with one probability or "
                "logit output (and optionally a label output)."
            )
        return scores[0], label

    def _probability_transform(self) -> str:
        """``"none"`` (the output holds probabilities), ``"softmax"`` or ``"sigmoid"``
        (it holds logits; a single column is the positive class's)."""
        name = self.probability_output
        node = self._producer.get(name)
        while node is not None and node.op_type in _PASS:
            node = self._producer.get(node.input[0])
        if node is None:
            return "softmax"
        if node.op_type in ("Softmax", "Sigmoid", "Concat", "ZipMap"):
            return "none" if node.op_type != "Sigmoid" else "sigmoid-probability"
        if node.op_type in _CLASSIFIERS:
            return "none"
        return "softmax"

    def _classes(self, classes: Any) -> np.ndarray:
        if classes is not None:
            return np.asarray(list(classes))
        for node in self.proto.graph.node:
            if node.op_type == "ZipMap" or node.op_type in _CLASSIFIERS:
                found = _attribute(node, "classlabels_int64s") or _attribute(
                    node, "classlabels_strings"
                )
                found = found or _attribute(node, "classlabels_ints")
                if found:
                    return np.asarray(found)
        looked_up = self._label_lookup()
        if looked_up is not None:
            return looked_up
        return np.arange(max(self._n_scores(), 2))

    def _label_lookup(self) -> np.ndarray | None:
        """The class labels a network's label output looks up by index (skl2onnx's
        ``ArrayFeatureExtractor(classes, argmax)``)."""
        consts = {t.name: t for t in self.proto.graph.initializer}
        for node in self.proto.graph.node:
            if node.op_type == "ArrayFeatureExtractor" and node.input[0] in consts:
                from onnx import numpy_helper

                return np.asarray(numpy_helper.to_array(consts[node.input[0]])).reshape(-1)
        return None

    def _n_scores(self) -> int:
        for o in self.proto.graph.output:
            if o.name == self.probability_output:
                dims = o.type.tensor_type.shape.dim
                if dims and dims[-1].dim_value:
                    return int(dims[-1].dim_value)
        return 2

    # ---------------------------------------------------------------- running it
    def _run(self, X: pd.DataFrame, names: list[str]) -> list[Any]:
        if self._session is None:
            ort = import_optional("onnxruntime", purpose="Predicting with an ONNX model")
            options = ort.SessionOptions()
            options.log_severity_level = 3  # errors only: not the converters' shape notes
            try:
                self._session = ort.InferenceSession(
                    self._runtime_proto().SerializeToString(),
                    options,
                    providers=["CPUExecutionProvider"],
                )
            except Exception as e:  # onnxruntime's errors derive from Exception only
                cause = str(e).strip()[:300].rstrip(".")
                raise ValidationError(
                    f"onnxruntime cannot load this ONNX graph: {cause}. The graph "
                    "itself is broken, not the rows: re-export it (a converter given float64 "
                    "columns can mix float and double tensors; export from float32 inputs, as "
                    "in docs/models.md)."
                ) from None
        return self._session.run(names, self._feed(X))

    def _runtime_proto(self) -> Any:
        """The graph with the scores tensor as an output (the ZipMap's input, when the
        graph maps the scores to a list of dicts)."""
        import onnx

        outputs = {o.name for o in self.proto.graph.output}
        if self.probability_output in outputs:
            return self.proto
        proto = onnx.ModelProto()
        proto.CopyFrom(self.proto)
        proto.graph.output.append(
            onnx.helper.make_tensor_value_info(
                self.probability_output, onnx.TensorProto.FLOAT, None
            )
        )
        return proto

    def _feed(self, X: pd.DataFrame) -> dict[str, np.ndarray]:
        """The graph's inputs for the rows ``X`` (module docstring)."""
        if len(self._inputs) == 1:
            name, kind, _ = self._inputs[0]
            width = self._input_width()
            if width is not None and width != X.shape[1]:
                raise ValidationError(
                    f"The ONNX input {name!r} takes {width} columns, but the rows have "
                    f"{X.shape[1]} ({list(X.columns)}); give the data the features the graph "
                    "was exported with, in its order."
                )
            return {name: self._column(X.to_numpy(), kind, name, rank=2)}
        missing = [n for n, _, _ in self._inputs if n not in X.columns]
        if missing:
            raise ValidationError(
                f"The ONNX model needs the columns {missing}, which the rows lack; its inputs are "
                f"{[n for n, _, _ in self._inputs]}."
            )
        return {
            name: self._column(X[name].to_numpy()[:, None], kind, name, rank)
            for name, kind, rank in self._inputs
        }

    def _input_width(self) -> int | None:
        """The number of columns the graph's single input takes, when it states one."""
        graph_input = next(i for i in self.proto.graph.input if i.name == self._inputs[0][0])
        dims = graph_input.type.tensor_type.shape.dim
        return int(dims[-1].dim_value) if len(dims) == 2 and dims[-1].dim_value > 0 else None

    @staticmethod
    def _column(values: np.ndarray, kind: int, name: str, rank: int) -> np.ndarray:
        dtype = _NUMPY_TYPES.get(kind)
        if dtype is None:
            raise UnsupportedModelError(
                f"The ONNX input {name!r} has an element type (code {kind}) that counterfact "
                "does not feed; use float, double, int64 or string inputs."
            )
        try:
            if dtype is object:
                out = np.array([[str(v) for v in row] for row in values], dtype=object)
            else:
                out = np.asarray(values, dtype=dtype)
        except (TypeError, ValueError):
            raise ValidationError(
                f"The ONNX input {name!r} takes numbers, but its column holds "
                f"{values.ravel()[:1].tolist()}; encode the column inside the graph or pass "
                "numeric values."
            ) from None
        return out.reshape(-1) if rank == 1 else out

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Class probabilities of the rows ``X``, columns in :attr:`classes_` order."""
        if len(X) == 0:
            return np.zeros((0, len(self.classes_)))
        (scores,) = self._run(X, [self.probability_output])
        S = np.asarray(scores, dtype=float).reshape(len(X), -1)
        if self._transform == "none":
            return S
        if S.shape[1] == 1:
            p = S[:, 0] if self._transform == "sigmoid-probability" else 1 / (1 + np.exp(-S[:, 0]))
            return np.column_stack([1 - p, p])
        e = np.exp(S - S.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """The graph's own label output where it has one, else the most probable class."""
        if len(X) == 0:
            return np.zeros(0, dtype=self.classes_.dtype)
        if self.label_output is None:
            return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
        (labels,) = self._run(X, [self.label_output])
        return np.asarray(labels).reshape(-1)

    def fit(self, *args: Any, **kwargs: Any) -> OnnxModel:
        """An ONNX graph is fitted already; refitting it is not possible."""
        raise UnsupportedModelError(
            "An ONNX model cannot be refitted: fit the original model and export it again."
        )

    # ---------------------------------------------------------------- pickling
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (OnnxModel, (self.proto.SerializeToString(), self.classes_.tolist()))

    def __repr__(self) -> str:
        kind = "one input tensor" if len(self._inputs) == 1 else f"{len(self._inputs)} inputs"
        return f"{type(self).__name__}({kind}, classes={self.classes_.tolist()})"


class OnnxTreeModel(OnnxModel):
    """An :class:`OnnxModel` whose estimator is a tree ensemble (``OnnxModel(...)``
    returns one for such a graph): the model compiler compiles its splits as it
    does scikit-learn's trees."""
