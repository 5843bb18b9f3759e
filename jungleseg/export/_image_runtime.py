"""The C99 runtime of exported image models: per pixel, the walk of each DAG through
its probes, and the functions that label a whole frame (depth models) or a stack of
channel planes (colour and grey models).

Kept apart from :mod:`._csource` (header, tables, shared and tabular runtime), which
puts this text after the tables: the image runtimes are most of the C text by length.
Each function takes the layout, the C name prefix ``n``, the accumulator type ``acc``
and the statement that scales a float sum (empty for the quantised variant).
"""
from __future__ import annotations

from ..features import _kernels as kernels
from ._layout import DEPTH_LIMIT_Q, FAR_Q, Layout, c_float

_DEPTH_RECIPROCAL_BITS = 16  # quantised depth: 2**16 * 1000 / depth, per pixel


def depth_runtime(layout: Layout, n: str, acc: str, scale_call: str) -> str:
    """A depth model's runtime: probe offsets scaled by the pixel's depth, a label per pixel
    (0-depth pixels: the background)."""
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


def colour_runtime(layout: Layout, n: str, acc: str, scale_call: str) -> str:
    """A colour or grey model's runtime: probes (and box means) on the channel planes."""
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
