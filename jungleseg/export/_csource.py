"""The C99 text of an exported model: header, source (tables and runtime), and the
Python helper that prepares channel planes for colour models."""
from __future__ import annotations

import json

import numpy as np

from .._version import __version__
from ..features import _kernels as kernels
from ._layout import DEPTH_LIMIT_Q, FAR_Q, FIXED_LIMIT, Layout

_DEPTH_RECIPROCAL_BITS = 16  # quantised depth: 2**16 * 1000 / depth, per pixel


def c_float(x: float) -> str:
    """A float32 value as a C literal that reads back bit for bit."""
    x = float(np.float32(x))
    if x == int(x) and abs(x) < 1 << 24 and not (x == 0 and np.signbit(x)):
        return f"{int(x)}.0f"
    return f"{x.hex()}f"


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
            f"Tables: {footprint['tables']} bytes of flash; the call needs "
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
            text += ["", "The quantised variant reads the same float rows: each value is "
                     "turned into a 16-bit code (8-bit with --threshold-bits 8) with integer "
                     "operations on its bits "
                     "(floor(x * 2^shift) - offset, per column), exact for values on that "
                     "grid (whole numbers always)."]
    elif layout.kind == "depth":
        text += ["Call, for a depth frame in millimetres (0: no reading), row by row:",
                 "    uint8_t labels[240 * 320];",
                 f"    {n}_segment_depth(depth, 240, 320, labels);   /* class values; "
                 f"{n}_BACKGROUND where depth is 0 */",
                 f"    {n}_segment_depth_proba(depth, 240, 320, proba);  /* proba: "
                 f"height * width * {n}_N_CLASSES, 0 at background */",
                 "",
                 "The float variant's labels equal jungleseg's segment(model, depth, "
                 "smoothing=0): the probability smoothing of the model is not exported."]
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
                 "as jungleseg does; for raw channels (input 'channels', or grey without "
                 "smoothing) they are the image itself.",
                 "The float variant's labels equal jungleseg's segment(model, image, "
                 "smoothing=0): the probability smoothing of the model is not exported. "
                 "Box means are exact for channels of whole numbers (8- and 16-bit images)."]
        if quantised:
            text += ["The quantised variant reads the same float planes and turns each probed "
                     "value into fixed point with integer operations on its bits."]
    text = [line.replace(" */", "").replace("/* ", "// ") for line in text]  # no nesting
    return "/*\n" + "\n".join((" * " + line).rstrip() for line in text) + "\n */\n"


def source(layout: Layout, name: str, family: dict, footprint: dict) -> str:
    """The ``<name>.c`` text: README comment, tables and runtime."""
    n = name
    quantised = layout.variant == "quantised"
    tables = layout.tables()
    out = [_readme(layout, name, family, footprint), f'#include "{n}.h"']
    if quantised and layout.kind in ("tabular", "colour"):
        out.append("#include <string.h>")
    out.append("")
    out.append(f"/* {layout.n_split} split nodes, in DAG and level order; a child code below its "
               "level's split count is a split node's rank in the level, otherwise (code - "
               "count) is a leaf row */")
    for key, (ctype, values) in tables.items():
        values = np.asarray(values)
        if key == "CLASSES":
            out.append(c_array(f"{n}_CLASSES", ctype, values, static=False))
        elif values.size:
            out.append(c_array(f"{n}_{key}", ctype, values))
    acc = _acc_type(layout)
    leaf_type = "uint8_t" if quantised else "float"
    # labelling: the first class of the largest (weighed) probability
    if layout.label_weight is None:
        weigh = "p[c]", "p[best]"
    elif quantised:
        weigh = (f"(uint32_t)p[c] * {n}_label_weight[c]",
                 f"(uint32_t)p[best] * {n}_label_weight[best]")
    else:
        weigh = f"p[c] * {n}_label_weight[c]", f"p[best] * {n}_label_weight[best]"
    out.append(f"""static int32_t {n}_best(const {acc} *p)
{{
    int32_t c, best = 0;
    for (c = 1; c < {n}_N_CLASSES; c++) {{
        if ({weigh[0]} > {weigh[1]}) {{
            best = c;
        }}
    }}
    return best;
}}

static void {n}_add_leaf(uint32_t leaf, {acc} *acc)
{{
    const {leaf_type} *row = {n}_leaf[leaf];
    int32_t c;
    for (c = 0; c < {n}_N_CLASSES; c++) {{
        acc[c] += row[c];
    }}
}}
""")
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
        out.append(_tabular_runtime(layout, n, acc, scale_call))
    elif layout.kind == "depth":
        out.append(_depth_runtime(layout, n, acc, scale_call))
    else:
        out.append(_colour_runtime(layout, n, acc, scale_call))
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


def _tabular_runtime(layout: Layout, n: str, acc: str, scale_call: str) -> str:
    quantised = layout.variant == "quantised"
    if quantised:
        read = f"""    int16_t x[{n}_N_FEATURES];
    int32_t j, g;
    for (j = 0; j < {n}_N_FEATURES; j++) {{
        int32_t v = {n}_fixed(&features[j], {n}_shift[j]) - {n}_offset[j];
        x[j] = (int16_t)(v < -32768 ? -32768 : (v > 32767 ? 32767 : v));
    }}
"""
    else:
        read = """    const float *x = features;
    int32_t g;
"""
    return f"""static uint32_t {n}_walk(int32_t g, const {'int16_t' if quantised else 'float'} *x)
{{
    uint32_t level = {n}_dag_level[g], k = {n}_root[g];
    uint32_t first = {n}_level_first[level], count = {n}_level_first[level + 1] - first;
    while (k < count) {{
        uint32_t i = first + k;
        k = x[{n}_feature[i]] < {n}_threshold[i] ? {n}_left[i] : {n}_right[i];
        level++;
        first = {n}_level_first[level];
        count = {n}_level_first[level + 1] - first;
    }}
    return k - count;
}}

static void {n}_sum(const float *features, {acc} *acc)
{{
{read}    for (g = 0; g < {n}_N_CLASSES; g++) {{
        acc[g] = 0;
    }}
    for (g = 0; g < {n}_N_DAGS; g++) {{
        {n}_add_leaf({n}_walk(g, x), acc);
    }}
{scale_call}}}

void {n}_predict_proba(const float *features, {n}_proba_t *proba)
{{
    {n}_sum(features, proba);
}}

int32_t {n}_predict(const float *features)
{{
    {acc} p[{n}_N_CLASSES];
    {n}_sum(features, p);
    return {n}_best(p);
}}
"""


def _depth_runtime(layout: Layout, n: str, acc: str, scale_call: str) -> str:
    if layout.variant == "quantised":
        shift = _DEPTH_RECIPROCAL_BITS + layout.quant["param_shift"]
        probe = f"""#define {n}_FAR_ {FAR_Q}
#define {n}_LIMIT_ {DEPTH_LIMIT_Q}

/* depth in mm at (r, c), {n}_FAR_ off the frame or where there is no reading */
static int32_t {n}_probe(const uint16_t *depth, int32_t h, int32_t w, int32_t r, int32_t c)
{{
    int32_t d;
    if (r < 0 || r >= h || c < 0 || c >= w) {{
        return {n}_FAR_;
    }}
    d = depth[r * w + c];
    return d == 0 ? {n}_FAR_ : (d > {n}_LIMIT_ ? {n}_LIMIT_ : d);
}}

/* floor(param * reciprocal / 2^{shift} + 1/2): a probe offset in pixels */
static int32_t {n}_step(int32_t param, int64_t reciprocal)
{{
    int64_t v = (int64_t)param * reciprocal + ((int64_t)1 << {shift - 1});
    return (int32_t)(v >= 0 ? v >> {shift} : -((-v + ((int64_t)1 << {shift}) - 1) >> {shift}));
}}

static uint32_t {n}_walk(int32_t g, const uint16_t *depth, int32_t h, int32_t w,
                         int32_t r, int32_t c)
{{
    int32_t d = depth[r * w + c];
    int64_t reciprocal;
    d = d > {n}_LIMIT_ ? {n}_LIMIT_ : d;
    reciprocal = (((int64_t)1000 << {_DEPTH_RECIPROCAL_BITS}) + d / 2) / d;
    uint32_t level = {n}_dag_level[g], k = {n}_root[g];
    uint32_t first = {n}_level_first[level], count = {n}_level_first[level + 1] - first;
    while (k < count) {{
        uint32_t i = first + k;
        const int16_t *p = {n}_params[i];
        int32_t a = {n}_probe(depth, h, w, r + {n}_step(p[0], reciprocal),
                              c + {n}_step(p[1], reciprocal));
        int32_t b = {n}_probe(depth, h, w, r + {n}_step(p[2], reciprocal),
                              c + {n}_step(p[3], reciprocal));
        k = a - b < {n}_threshold[i] ? {n}_left[i] : {n}_right[i];
        level++;
        first = {n}_level_first[level];
        count = {n}_level_first[level + 1] - first;
    }}
    return k - count;
}}
"""
    else:
        far = c_float(kernels.DEPTH_FAR)
        probe = f"""#define {n}_FAR_ {far}  /* metres read off the body */

/* depth in metres at (r, c), {n}_FAR_ off the frame or where there is no reading */
static float {n}_probe(const uint16_t *depth, int32_t h, int32_t w, int32_t r, int32_t c)
{{
    uint16_t d;
    if (r < 0 || r >= h || c < 0 || c >= w) {{
        return {n}_FAR_;
    }}
    d = depth[r * w + c];
    return d ? (float)d / 1000.0f : {n}_FAR_;
}}

static uint32_t {n}_walk(int32_t g, const uint16_t *depth, int32_t h, int32_t w,
                         int32_t r, int32_t c)
{{
    float d = (float)depth[r * w + c] / 1000.0f;
    uint32_t level = {n}_dag_level[g], k = {n}_root[g];
    uint32_t first = {n}_level_first[level], count = {n}_level_first[level + 1] - first;
    while (k < count) {{
        uint32_t i = first + k;
        const float *p = {n}_params[i];
        float y[4];
        int32_t o[4], j;
        for (j = 0; j < 4; j++) {{  /* floor(p / d + 0.5), four at once */
            y[j] = p[j] / d + 0.5f;
        }}
        for (j = 0; j < 4; j++) {{
            o[j] = (int32_t)y[j];
            o[j] -= y[j] < (float)o[j];
        }}
        float v = {n}_probe(depth, h, w, r + o[0], c + o[1])
            - {n}_probe(depth, h, w, r + o[2], c + o[3]);
        k = v < {n}_threshold[i] ? {n}_left[i] : {n}_right[i];
        level++;
        first = {n}_level_first[level];
        count = {n}_level_first[level + 1] - first;
    }}
    return k - count;
}}
"""
    return probe + f"""
static void {n}_pixel(const uint16_t *depth, int32_t h, int32_t w, int32_t r, int32_t c,
                      {acc} *acc)
{{
    int32_t g;
    for (g = 0; g < {n}_N_CLASSES; g++) {{
        acc[g] = 0;
    }}
    for (g = 0; g < {n}_N_DAGS; g++) {{
        {n}_add_leaf({n}_walk(g, depth, h, w, r, c), acc);
    }}
{scale_call}}}

void {n}_segment_depth(const uint16_t *depth, int32_t height, int32_t width, uint8_t *labels)
{{
    {acc} p[{n}_N_CLASSES];
    int32_t r, c;
    for (r = 0; r < height; r++) {{
        for (c = 0; c < width; c++) {{
            if (depth[r * width + c] == 0) {{
                labels[r * width + c] = {n}_BACKGROUND;
                continue;
            }}
            {n}_pixel(depth, height, width, r, c, p);
            labels[r * width + c] = (uint8_t){n}_CLASSES[{n}_best(p)];
        }}
    }}
}}

void {n}_segment_depth_proba(const uint16_t *depth, int32_t height, int32_t width,
                             {n}_proba_t *proba)
{{
    int32_t r, c, k;
    for (r = 0; r < height; r++) {{
        for (c = 0; c < width; c++) {{
            {n}_proba_t *p = proba + ((int64_t)r * width + c) * {n}_N_CLASSES;
            if (depth[r * width + c] == 0) {{
                for (k = 0; k < {n}_N_CLASSES; k++) {{
                    p[k] = 0;
                }}
                continue;
            }}
            {n}_pixel(depth, height, width, r, c, p);
        }}
    }}
}}
"""


def _colour_runtime(layout: Layout, n: str, acc: str, scale_call: str) -> str:
    quantised = layout.variant == "quantised"
    has_box = "box" in layout.tables()
    value = "int32_t" if quantised else "float"
    read = (f"{n}_fixed(&plane[(int64_t)row * w + col], {layout.quant.get('shift', 0)})"
            if quantised else "plane[(int64_t)row * w + col]")
    box = ""
    if has_box:
        if quantised:
            mean = """    {
        int64_t sum = 0, count = (int64_t)(r1 - r0) * (c1 - c0);
        for (r = r0; r < r1; r++) {
            for (c = c0; c < c1; c++) {
                sum += READ;
            }
        }
        return (int32_t)(sum >= 0 ? sum / count : -((-sum + count - 1) / count));
    }"""
        else:
            mean = """    {
        double sum = 0.0;
        for (r = r0; r < r1; r++) {
            for (c = c0; c < c1; c++) {
                sum += READ;
            }
        }
        return (float)(sum / (double)((r1 - r0) * (c1 - c0)));
    }"""
        mean = mean.replace("READ", read.replace("row", "r").replace("col", "c"))
        box = f"""
/* mean of a channel over the box of half-size (hr, hc) centred on the clamped probe,
 * clipped to the image */
static {value} {n}_box_mean(const float *plane, int32_t h, int32_t w, int32_t row, int32_t col,
                       int32_t hr, int32_t hc)
{{
    int32_t r, c, r0, r1, c0, c1;
    row = row < 0 ? 0 : (row >= h ? h - 1 : row);
    col = col < 0 ? 0 : (col >= w ? w - 1 : col);
    r0 = row - hr < 0 ? 0 : row - hr;
    r1 = (row + hr >= h ? h - 1 : row + hr) + 1;
    c0 = col - hc < 0 ? 0 : col - hc;
    c1 = (col + hc >= w ? w - 1 : col + hc) + 1;
{mean}
}}
"""
    kinds = ["value", "difference", "sum", "absdiff"]
    box_read = (f"""        if (kind >= {kernels.KIND_BOX_VALUE}) {{
            a = {n}_box_mean(planes + (int64_t){n}_channel[i][0] * h * w, h, w,
                        r + {n}_offset[i][0], c + {n}_offset[i][1],
                        {n}_box[i][0], {n}_box[i][1]);
            b = {n}_box_mean(planes + (int64_t){n}_channel[i][1] * h * w, h, w,
                        r + {n}_offset[i][2], c + {n}_offset[i][3],
                        {n}_box[i][0], {n}_box[i][1]);
            kind -= {kernels.KIND_BOX_VALUE - kernels.KIND_VALUE};
        }} else """ if has_box else "        ")
    return box + f"""
/* a channel at the probe clamped to the image */
static {value} {n}_at(const float *plane, int32_t h, int32_t w, int32_t row, int32_t col)
{{
    row = row < 0 ? 0 : (row >= h ? h - 1 : row);
    col = col < 0 ? 0 : (col >= w ? w - 1 : col);
    return {read};
}}

/* kinds: {', '.join(f'{kernels.COLOUR_KINDS[k]} {k}' for k in kinds)}
 * (the box kinds {kernels.KIND_BOX_VALUE}..{kernels.KIND_BOX_ABSDIFF} read box means) */
static uint32_t {n}_walk(int32_t g, const float *planes, int32_t h, int32_t w, int32_t r,
                         int32_t c)
{{
    uint32_t level = {n}_dag_level[g], k = {n}_root[g];
    uint32_t first = {n}_level_first[level], count = {n}_level_first[level + 1] - first;
    while (k < count) {{
        uint32_t i = first + k;
        int32_t kind = {n}_kind[i];
        {value} a, b, v;
{box_read}{{
            a = {n}_at(planes + (int64_t){n}_channel[i][0] * h * w, h, w,
                       r + {n}_offset[i][0], c + {n}_offset[i][1]);
            b = {n}_at(planes + (int64_t){n}_channel[i][1] * h * w, h, w,
                       r + {n}_offset[i][2], c + {n}_offset[i][3]);
        }}
        v = a - b;
        v = kind == {kernels.KIND_VALUE} ? a : (kind == {kernels.KIND_SUM} ? a + b
            : (kind == {kernels.KIND_ABSDIFF} ? (v < 0 ? -v : v) : v));
        k = v < {n}_threshold[i] ? {n}_left[i] : {n}_right[i];
        level++;
        first = {n}_level_first[level];
        count = {n}_level_first[level + 1] - first;
    }}
    return k - count;
}}

static void {n}_pixel(const float *planes, int32_t h, int32_t w, int32_t r, int32_t c,
                      {acc} *acc)
{{
    int32_t g;
    for (g = 0; g < {n}_N_CLASSES; g++) {{
        acc[g] = 0;
    }}
    for (g = 0; g < {n}_N_DAGS; g++) {{
        {n}_add_leaf({n}_walk(g, planes, h, w, r, c), acc);
    }}
{scale_call}}}

void {n}_segment(const float *planes, int32_t height, int32_t width, uint8_t *labels)
{{
    {acc} p[{n}_N_CLASSES];
    int32_t r, c;
    for (r = 0; r < height; r++) {{
        for (c = 0; c < width; c++) {{
            {n}_pixel(planes, height, width, r, c, p);
            labels[r * width + c] = (uint8_t){n}_CLASSES[{n}_best(p)];
        }}
    }}
}}

void {n}_segment_proba(const float *planes, int32_t height, int32_t width, {n}_proba_t *proba)
{{
    int32_t r, c;
    for (r = 0; r < height; r++) {{
        for (c = 0; c < width; c++) {{
            {n}_pixel(planes, height, width, r, c,
                      proba + ((int64_t)r * width + c) * {n}_N_CLASSES);
        }}
    }}
}}
"""


def planes_helper(name: str, family: dict, input_values: dict | None) -> str:
    """``<name>_planes.py``: the channel planes a colour model's C code reads, from an
    image, as jungleseg prepares them."""
    return f'''"""Channel planes for {name}_segment (written by jungleseg's C export).

    import numpy as np
    from {name}_planes import planes
    p = planes(image)            # (N_FEATURES, height, width) float32, C order
    p.tofile("planes.f32")       # or hand p.ctypes to the C function
"""
import json

import numpy as np

from jungleseg.features import family_from_dict
from jungleseg.segmentation._input import checked_image

FAMILY = family_from_dict(json.loads({json.dumps(json.dumps(family))}))
INPUT_VALUES = json.loads({json.dumps(json.dumps(input_values))})


def planes(image) -> np.ndarray:
    """The (n_channels, height, width) float32 planes the model reads from ``image`` (as
    the model's own segmentation takes it: same checks and units)."""
    image = checked_image(image, FAMILY, INPUT_VALUES)
    return np.ascontiguousarray(np.moveaxis(FAMILY.channels(image), 2, 0))
'''
