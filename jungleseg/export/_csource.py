"""The C99 text of an exported model: the header, and the source's README comment,
tables, shared runtime (class choice, leaf sums, fixed point) and tabular runtime.

The per-pixel runtimes of image models, much longer, are in :mod:`._image_runtime`; the
Python helper that prepares a colour model's planes is in :mod:`._planes`. ``c_float``
lives in :mod:`._layout` with the other C type helpers, so that both text modules can use
it without importing each other."""
from __future__ import annotations

import json

import numpy as np

from .._version import __version__
from ._image_runtime import colour_runtime, depth_runtime
from ._inline import inline_walk
from ._layout import DEPTH_LIMIT_Q, FIXED_LIMIT, Layout, c_float
from ._packing import FIELD_LIMIT


def c_array(name: str, ctype: str, values: np.ndarray, static: bool = True) -> str:
    """A ``static const`` C array definition of ``values`` (1-D or 2-D)."""
    values = np.asarray(values)
    if ctype == "float":
        items = [c_float(v) for v in values.reshape(-1)]
    else:
        items = [str(int(v)) for v in values.reshape(-1)]
    width = values.shape[1] if values.ndim == 2 else 0
    dims = f"[{values.shape[0]}]" + (f"[{width}]" if values.ndim == 2 else "")
    lines, line = [], "   "
    for k, item in enumerate(items):
        if width and k % width == 0:
            item = "{" + item
        if width and k % width == width - 1:
            item += "}"
        piece = f" {item},"
        if len(line) + len(piece) > 96:
            lines.append(line)
            line = "   "
        line += piece
    lines.append(line)
    return (f"{'static ' if static else ''}const {ctype} {name}{dims} = {{\n"
            + "\n".join(lines).rstrip(",") + "\n};\n")


def _acc_type(layout: Layout) -> str:
    if layout.variant == "float":
        return "float"
    return "uint16_t" if 255 * layout.n_dags < 1 << 16 else "uint32_t"


def header(layout: Layout, name: str) -> str:
    """The ``<name>.h`` text."""
    guard = f"{name.upper()}_H"
    quantised = layout.variant == "quantised"
    acc = _acc_type(layout)
    lines = [f"/* {name}.h: decision jungle exported by jungleseg {__version__} "
             f"({layout.kind} model, {layout.variant} variant). How to call it: see {name}.c. */",
             f"#ifndef {guard}", f"#define {guard}", "", "#include <stdint.h>", "",
             f"#define {name}_N_FEATURES {layout.n_features}",
             f"#define {name}_N_CLASSES {layout.n_classes}",
             f"#define {name}_N_DAGS {layout.n_dags}"]
    if quantised:
        lines += [f"/* probabilities are sums of the DAGs' leaf values (0..255 each): divide "
                  f"by {name}_PROBA_ONE */",
                  f"typedef {acc} {name}_proba_t;",
                  f"#define {name}_PROBA_ONE {255 * layout.n_dags}"]
    else:
        lines += [f"typedef float {name}_proba_t;", f"#define {name}_PROBA_ONE 1.0f"]
    lines += ["", "/* the class value of each class index */",
              f"extern const int32_t {name}_CLASSES[{name}_N_CLASSES];", ""]
    if layout.kind == "tabular":
        lines += [f"int32_t {name}_predict(const float *features);",
                  f"void {name}_predict_proba(const float *features, {name}_proba_t *proba);"]
    elif layout.kind == "depth":
        lines += [f"#define {name}_BACKGROUND {layout.background}",
                  f"void {name}_segment_depth(const uint16_t *depth, int32_t height, "
                  "int32_t width, uint8_t *labels);",
                  f"void {name}_segment_depth_proba(const uint16_t *depth, int32_t height, "
                  f"int32_t width, {name}_proba_t *proba);"]
    else:
        lines += [f"void {name}_segment(const float *planes, int32_t height, int32_t width, "
                  "uint8_t *labels);",
                  f"void {name}_segment_proba(const float *planes, int32_t height, "
                  f"int32_t width, {name}_proba_t *proba);"]
    lines += ["", f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def smoothing_note(layout: Layout, n: str, image: str) -> list[str]:
    """The README comment's lines on probability smoothing, which the C code does not do."""
    if not layout.smoothing:
        return [f"The model does not smooth its probabilities: the float variant's labels "
                f"equal jungleseg's segment(model, {image})."]
    box = 2 * layout.smoothing + 1
    how = " edge-aware (guided filter)" if layout.guided_eps else ""
    return ["NOT EXPORTED: probability smoothing. In Python this model averages each class's "
            f"probabilities over {box}x{box} boxes{how} (smoothing {layout.smoothing}) before "
            "it labels a pixel. This C code labels every pixel from its own probabilities: "
            f"the float variant's labels equal segment(model, {image}, smoothing=0), and "
            f"differ from segment(model, {image}) near class boundaries and at stray pixels "
            "(how many depends on the model and the images; docs/guide/deploying.md gives "
            f"a measured figure). To smooth on the device, average {n}_segment"
            f"{'_depth' if image == 'depth' else ''}_proba's output per class over the same "
            "boxes and take the largest."]


def _readme(layout: Layout, name: str, family: dict, footprint: dict) -> str:
    n = name
    quantised = layout.variant == "quantised"
    exact = ("Integers only: no floating-point operation. " if quantised else
             "float32 arithmetic in the order jungleseg uses: the same labels as Python, bit "
             "for bit, on an IEEE-754 target evaluating float as float (FLT_EVAL_METHOD 0; "
             "do not build with -ffast-math). ")
    proba = (f"Probabilities come as sums of the DAGs' leaf values (0..255 each): divide by "
             f"{n}_PROBA_ONE for fractions." if quantised else
             "Probabilities are float32, within 1e-6 of Python's (equal on IEEE targets).")
    text = [f"{n}.c: a decision jungle exported by jungleseg {__version__}.",
            "",
            f"Model: {layout.kind}, {layout.n_dags} DAGs, {layout.n_split} split nodes, "
            f"{layout.n_leaves} distinct leaves, {layout.n_classes} classes "
            f"({n}_CLASSES holds their values); {layout.variant} variant.",
            f"Features: {json.dumps(family)}",
            f"Tables: {footprint['tables']} bytes of flash"
            + (" besides the code, which holds the nodes (style inline: one comparison per "
               "node)" if layout.inline else "") + f"; the call needs "
            f"{footprint['ram']} bytes of stack besides its arguments.",
            "",
            "Self-contained C99: include <stdint.h> and <string.h> only, no heap, no other "
            "library. Build:",
            f"    cc -std=c99 -O2 -c {n}.c",
            exact + proba, ""]
    if layout.kind == "tabular":
        text += ["Call:",
                 f"    float x[{n}_N_FEATURES] = {{...}};      /* one row, columns in training "
                 "order */",
                 f"    int32_t k = {n}_predict(x);            /* class index; its value is "
                 f"{n}_CLASSES[k] */",
                 f"    {n}_proba_t p[{n}_N_CLASSES];",
                 f"    {n}_predict_proba(x, p);              // probability of each class"]
        if quantised:
            code = ("floor((floor(x * 2^shift) - offset) / 2^step)" if layout.uniform("step")
                    != 0 else "floor(x * 2^shift) - offset")
            text += ["", "The quantised variant reads the same float rows: each value is "
                     "turned into a 16-bit code (thresholds of 8 bits with --threshold-bits 8) "
                     f"with integer operations on its bits ({code}, per column), exact for "
                     "values on the grid 2^-shift (whole numbers always)."]
    elif layout.kind == "depth":
        text += ["Call, for a depth frame in millimetres (0: no reading), row by row:",
                 "    uint8_t labels[240 * 320];",
                 f"    {n}_segment_depth(depth, 240, 320, labels);   /* class values; "
                 f"{n}_BACKGROUND where depth is 0 */",
                 f"    {n}_segment_depth_proba(depth, 240, 320, proba);  /* proba: "
                 f"height * width * {n}_N_CLASSES, 0 at background */",
                 "", *smoothing_note(layout, n, "depth")]
        if quantised:
            text += ["The quantised variant computes in millimetres (depths beyond "
                     f"{DEPTH_LIMIT_Q} mm read as {DEPTH_LIMIT_Q} mm) and 16-bit fixed point."]
    else:
        text += ["Call with the model's channel planes, float32, plane after plane, each "
                 "row by row (height * width values per plane):",
                 f"    {n}_segment(planes, height, width, labels);   // uint8 class values",
                 f"    {n}_segment_proba(planes, height, width, proba);  /* height * width * "
                 f"{n}_N_CLASSES */",
                 f"{n}_planes.py (written beside this file) prepares the planes from an image "
                 "as jungleseg does; " + _planes_are(family),
                 *smoothing_note(layout, n, "image"),
                 "Box means are exact for channels of whole numbers (8- and 16-bit images)."]
        if quantised:
            text += ["The quantised variant reads the same float planes and turns each probed "
                     "value into fixed point with integer operations on its bits."]
    text = [line.replace(" */", "").replace("/* ", "// ") for line in text]  # no nesting
    return "/*\n" + "\n".join((" * " + line).rstrip() for line in text) + "\n */\n"


def _planes_are(family: dict) -> str:
    """What the planes of a colour model hold: each channel's 8-bit code for a model of
    quantised channels (Features above lists its quantiser), else the channels' values."""
    if "quantiser" in family:
        return ("each plane holds its channel's 8-bit codes, clip(rint((v - low) * scale), 0, "
                "255) of each value v in float32, with the channel's low and scale from the "
                "quantiser in Features above (for raw channels, input 'channels' or grey "
                "without smoothing, v is the image's value in the training images' units).")
    return ("for raw channels (input 'channels', or grey without smoothing) they are the "
            "image itself.")


def source(layout: Layout, name: str, family: dict, footprint: dict) -> str:
    """The ``<name>.c`` text: README comment, tables and runtime."""
    n = name
    quantised = layout.variant == "quantised"
    tables = layout.tables()
    out = [_readme(layout, name, family, footprint), f'#include "{n}.h"']
    if (quantised and layout.kind in ("tabular", "colour")) or layout.inline:
        out.append("#include <string.h>")
    out.append("")
    if not layout.inline:
        out.append(f"/* {layout.n_split} split nodes, in DAG and level order; a child code below "
                   "its level's split count is a split node's rank in the level, otherwise "
                   "(code - count) is a leaf row */")
    for key, (ctype, values) in tables.items():
        values = np.asarray(values)
        if key == "CLASSES":
            out.append(c_array(f"{n}_CLASSES", ctype, values, static=False))
        elif values.size:
            out.append(c_array(f"{n}_{key}", ctype, values))
    acc = _acc_type(layout)
    leaf_type = "uint8_t" if quantised else "float"
    classes = layout.leaf_classes()
    votes = classes is not None and layout.label_weight is None
    best_type = _votes_type(layout) if votes else acc
    # labelling: the first class of the largest (weighed) probability, or vote count
    if layout.label_weight is None:
        weigh, weigh_type = "p[{c}]", best_type
    elif quantised:
        weigh, weigh_type = f"(uint32_t)p[{{c}}] * {n}_label_weight[{{c}}]", "uint32_t"
    else:
        weigh, weigh_type = f"p[{{c}}] * {n}_label_weight[{{c}}]", "float"
    # adding 0 leaves a sum as it is, bit for bit: a row of one nonzero value adds it alone
    single = "" if "leaf_single" not in tables else f"""\
    c = {n}_leaf_single[leaf];
    if (c < {n}_N_CLASSES) {{
        acc[c] += row[c];
        return;
    }}
"""
    if classes is not None:  # pure leaves: the walk gives classes, a leaf adds its value
        value = c_float(1.0) if not quantised else "255"
        add_leaf = f"""static void {n}_add_leaf(uint32_t leaf, {acc} *acc)
{{
    acc[leaf] += {value};  /* leaf: the DAG's class (every leaf is pure) */
}}
"""
    else:
        add_leaf = f"""static void {n}_add_leaf(uint32_t leaf, {acc} *acc)
{{
    const {leaf_type} *row = {n}_leaf[leaf];
    int32_t c;
{single}    for (c = 0; c < {n}_N_CLASSES; c++) {{
        acc[c] += row[c];
    }}
}}
"""
    out.append(f"""static int32_t {n}_best(const {best_type} *p)
{{
    int32_t c, best = 0;
    {weigh_type} top = {weigh.format(c="0")}, v;
    for (c = 1; c < {n}_N_CLASSES; c++) {{
        v = {weigh.format(c="c")};
        if (v > top) {{
            top = v;
            best = c;
        }}
    }}
    return best;
}}

{add_leaf}""")
    if not quantised:
        scale = c_float(np.float32(1.0 / layout.n_dags))
        out.append(f"""static void {n}_scale({acc} *acc)
{{
    int32_t c;
    for (c = 0; c < {n}_N_CLASSES; c++) {{
        acc[c] *= {scale};  /* 1 / {n}_N_DAGS, as float32 */
    }}
}}
""")
    scale_call = "" if quantised else f"    {n}_scale(acc);\n"
    if quantised and layout.kind in ("tabular", "colour"):
        out.append(_fixed_function(n))
    if layout.kind == "tabular":
        out.append(_tabular_runtime(layout, n, acc, scale_call, votes))
    elif layout.kind == "depth":
        out.append(depth_runtime(layout, n, acc, scale_call))
    else:
        out.append(colour_runtime(layout, n, acc, scale_call))
    return "\n".join(out)


def _fixed_function(n: str) -> str:
    return f"""/* floor(x * 2^shift), saturated to +-{FIXED_LIMIT} (NaN and +inf: the top, so that
 * they go right, as x < t is false for them), with integer operations on the bits of x */
static int32_t {n}_fixed(const float *x, int32_t shift)
{{
    uint32_t bits, mag, m;
    int32_t e, p;
    memcpy(&bits, x, sizeof bits);  /* the float's bits, read as an integer */
    mag = bits & 0x7fffffffu;
    if (mag >= 0x7f800000u) {{
        return (mag > 0x7f800000u || !(bits >> 31)) ? {FIXED_LIMIT} : -{FIXED_LIMIT};
    }}
    e = (int32_t)(mag >> 23);
    m = mag & 0x7fffffu;
    if (e) {{
        m |= 0x800000u;
    }} else {{
        e = 1;
    }}
    p = e - 150 + shift;  /* |x| * 2^shift = m * 2^p */
    if (p >= 0) {{
        uint32_t v = p > 5 ? (uint32_t){FIXED_LIMIT} : m << p;
        if (v > (uint32_t){FIXED_LIMIT}) {{
            v = (uint32_t){FIXED_LIMIT};
        }}
        return (bits >> 31) ? -(int32_t)v : (int32_t)v;
    }}
    p = -p;
    if (p >= 31) {{
        return ((bits >> 31) && m) ? -1 : 0;
    }}
    if (bits >> 31) {{
        return -(int32_t)((m + ((uint32_t)1 << p) - 1u) >> p);
    }}
    return (int32_t)(m >> p);
}}
"""


def _votes_type(layout: Layout) -> str:
    """The C type of a class's vote count (one vote per DAG)."""
    return "uint8_t" if layout.n_dags < 1 << 8 else "uint16_t" if layout.n_dags < 1 << 16 \
        else "uint32_t"


def _code_function(layout: Layout, n: str) -> str | None:
    """``<n>_keys`` of an inline float model that compares column codes
    (:func:`~._layout.column_codes`), or None (it compares float keys)."""
    tables = layout.tables()
    if "code_scale" not in tables:
        return None
    # truncation is the floor where no column's codes go below 0
    floor = ("" if tables["code_low"][1].min(initial=0) >= 0 else
             "        code -= (float)code > y;  /* the floor of a negative y */\n")
    return f"""/* each value's small integer code (column_codes in jungleseg's export._layout):
 * floor(x * scale[j]), scale a power of two, kept within low[j]..high[j] (NaN the highest,
 * so that it goes right as x < t is false for it), less base[j] */
static void {n}_keys(const float *features, int32_t *x)
{{
    int32_t j;
    for (j = 0; j < {n}_N_FEATURES; j++) {{
        float y = features[j] * {n}_code_scale[j];
        int32_t code;
        y = y < {n}_code_high[j] ? y : {n}_code_high[j];
        y = y > {n}_code_low[j] ? y : {n}_code_low[j];
        code = (int32_t)y;
{floor}        x[j] = code - {n}_code_base[j];
    }}
}}
"""


def _tabular_runtime(layout: Layout, n: str, acc: str, scale_call: str, votes: bool) -> str:
    quantised = layout.variant == "quantised"
    if quantised:
        shift = layout.uniform("shift")
        shift = f"{n}_shift[j]" if shift is None else str(shift)
        step = layout.uniform("step")
        step = f"{n}_step[j]" if step is None else str(step)
        divide = "" if step == "0" else f"""\
        /* floor(v / 2^step): the column's thresholds share their last step bits */
        v = v >= 0 ? v >> {step}
            : -(int32_t)(((uint32_t)-v + ((uint32_t)1 << {step}) - 1u) >> {step});
"""
        codes = f"""/* each column's 16-bit code */
static void {n}_codes(const float *features, int16_t *x)
{{
    int32_t j;
    for (j = 0; j < {n}_N_FEATURES; j++) {{
        int32_t v = {n}_fixed(&features[j], {shift}) - {n}_offset[j];
{divide}        x[j] = (int16_t)(v < -32768 ? -32768 : (v > 32767 ? 32767 : v));
    }}
}}
"""
        row = f"    int16_t x[{n}_N_FEATURES];\n", f"    {n}_codes(features, x);\n"
    elif layout.inline:
        codes = _code_function(layout, n) or f"""/* each value's order-preserving integer key
 * (float_keys in jungleseg's export._inline): the bits of its magnitude, negated for a
 * negative sign; NaN the largest, so that it goes right as x < t is false for it */
static void {n}_keys(const float *features, int32_t *x)
{{
    int32_t j;
    for (j = 0; j < {n}_N_FEATURES; j++) {{
        uint32_t bits, magnitude;
        int32_t key, sign;
        memcpy(&bits, &features[j], sizeof bits);  /* the float's bits, as an integer */
        magnitude = bits & 0x7fffffffu;
        sign = -(int32_t)(bits >> 31);  /* 0, or -1 for a negative sign */
        key = ((int32_t)magnitude ^ sign) - sign;
        x[j] = magnitude > 0x7f800000u ? 0x7fffffff : key;
    }}
}}
"""
        row = f"    int32_t x[{n}_N_FEATURES];\n", f"    {n}_keys(features, x);\n"
    else:
        codes = ""
        row = "    const float *x = features;\n", ""
    # the row as the nodes compare it: declared, then converted
    read = f"{row[0]}    uint32_t leaf[{n}_N_DAGS];\n    int32_t g;\n{row[1]}"
    walk = inline_walk(layout, n) if layout.inline else _packed_walk(layout, n)
    if votes:  # pure leaves, no label weights: the most voted class
        calls = "\n".join(f"    votes[{n}_dag{g}(x)]++;" for g in range(layout.n_dags))
        predict = f"""{{
    {_votes_type(layout)} votes[{n}_N_CLASSES];
{row[0]}    int32_t g;
{row[1]}    for (g = 0; g < {n}_N_CLASSES; g++) {{
        votes[g] = 0;
    }}
{calls}
    return {n}_best(votes);
}}"""
    else:
        predict = f"""{{
    {acc} p[{n}_N_CLASSES];
    {n}_sum(features, p);
    return {n}_best(p);
}}"""
    return f"""{walk}
{codes}
static void {n}_sum(const float *features, {acc} *acc)
{{
{read}    for (g = 0; g < {n}_N_CLASSES; g++) {{
        acc[g] = 0;
    }}
    {n}_walk(x, leaf);
    for (g = 0; g < {n}_N_DAGS; g++) {{
        {n}_add_leaf(leaf[g], acc);
    }}
{scale_call}}}

void {n}_predict_proba(const float *features, {n}_proba_t *proba)
{{
    {n}_sum(features, proba);
}}

int32_t {n}_predict(const float *features)
{predict}
"""


def _packed_walk(layout: Layout, n: str) -> str:
    """The table runtime's ``<name>_walk``: the DAGs' walks over the node stream."""
    quantised = layout.variant == "quantised"
    packed = layout.packed
    cb, tb = packed.column_bits, packed.threshold_bits
    if cb + tb <= FIELD_LIMIT:  # column and threshold in one read
        read_test = f"""            test = {n}_field(node, {cb + tb}u);
            t = test >> {cb};
"""
    else:
        read_test = f"""            test = {n}_field(node, {cb}u);
            t = {n}_field(node + {cb}u, {tb}u);
"""
    root = f"{n}_root[g]" if "root" in layout.tables() else f"{int(layout.roots[0])}u"
    if packed.level_child_bits.max(initial=1) < 16:
        child_bits = f"    return ({n}_level_child_bits[l >> 1] >> ((l & 1u) * 4u)) & 15u;\n"
    else:
        child_bits = f"    return {n}_level_child_bits[l];\n"
    if quantised:
        threshold = f"(int32_t)t - {packed.threshold_bias}" if packed.threshold_bias else \
            "(int32_t)t"
    else:
        threshold = f"{n}_threshold_value[t]"
    return f"""/* the {{width}} bits (at most 25) at bit {{at}} of the node stream */
static uint32_t {n}_field(uint32_t at, uint32_t width)
{{
    const uint8_t *p = {n}_nodes + (at >> 3);
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
        | (uint32_t)p[3] << 24;
    return (v >> (at & 7u)) & ((1u << width) - 1u);
}}

/* the bits of a child code of level l's nodes: enough for the next level's split nodes
 * and the leaf rows */
static uint32_t {n}_child_bits(uint32_t l)
{{
{child_bits}}}

/* The leaf row each DAG reaches, the DAGs walked side by side (their steps do not wait
 * for each other). A node is column ({cb} bits), threshold ({tb} bits), left and right
 * child codes ({n}_child_bits of its level each). */
static void {n}_walk(const {'int16_t' if quantised else 'float'} *x, uint32_t *leaf)
{{
    uint32_t level[{n}_N_DAGS], at[{n}_N_DAGS], count[{n}_N_DAGS];
    int32_t g, busy = 1;
    for (g = 0; g < {n}_N_DAGS; g++) {{
        level[g] = {n}_dag_level[g];
        leaf[g] = {root};
        at[g] = {n}_dag_bit[g];
        count[g] = {n}_level_count[level[g]];
    }}
    while (busy) {{
        busy = 0;
        for (g = 0; g < {n}_N_DAGS; g++) {{
            uint32_t k = leaf[g], child, node, test, t, right;
            if (k >= count[g]) {{
                continue;
            }}
            child = {n}_child_bits(level[g]);
            node = at[g] + k * ({cb + tb}u + 2u * child);
{read_test}            right = x[test & {(1 << cb) - 1}u] < {threshold} ? 0u : child;
            leaf[g] = {n}_field(node + {cb + tb}u + right, child);
            at[g] += count[g] * ({cb + tb}u + 2u * child);
            count[g] = {n}_level_count[++level[g]];
            busy = 1;
        }}
    }}
    for (g = 0; g < {n}_N_DAGS; g++) {{
        leaf[g] -= count[g];
    }}
}}
"""

