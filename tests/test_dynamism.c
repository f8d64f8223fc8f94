/* The dynamism tracker and source-name normalization. Ports PyTorch's
   test/fx/test_dynamism.py (each example dict becomes one observation per
   leaf path) and checks dyn_normalize_name's regular expression on every
   edge, bad input, and allocation failure leaving the state unchanged. */
#include "common.h"

static const char *norm(const char *in)
{
    static char buf[256];
    size_t n = mguard_dyn_normalize_name(in, buf, sizeof buf);
    assert_int_equal(n, strlen(buf));
    return buf;
}

static const char *fmt(const mguard_dyn *d)
{
    static char buf[4096];
    size_t n = mguard_dyn_format(d, buf, sizeof buf);
    assert_int_equal(n, strlen(buf));
    return buf;
}

/* Position k of path varies: mguard_dyn_dims with a buffer of k + 1 flags. */
static bool varies_at(const mguard_dyn *d, const char *path, size_t k)
{
    bool v[8];
    assert_true(k < 8);
    return mguard_dyn_dims(d, path, NULL, v, k + 1) && v[k];
}

static void shape1(mguard_dyn *d, const char *path, int64_t a)
{
    assert_int_equal(mguard_dyn_observe(d, path, &a, 1), MGUARD_OK);
}

static void shape2(mguard_dyn *d, const char *path, int64_t a, int64_t b)
{
    int64_t s[2];
    s[0] = a;
    s[1] = b;
    assert_int_equal(mguard_dyn_observe(d, path, s, 2), MGUARD_OK);
}

/* ---- dyn_normalize_name ---------------------------------------------- */

static void test_normalize_rewrites_attribute_access(void **state)
{
    (void)state;
    assert_string_equal(norm("L.x.y"), "L['x']['y']");
    assert_string_equal(norm("L.self._modules.y"), "L['self']['_modules']['y']");
    assert_string_equal(norm("L.x['y'].z"), "L['x']['y']['z']");
    assert_string_equal(norm("L.x1._2a"), "L['x1']['_2a']");
    assert_string_equal(norm(".x"), "['x']");
    assert_string_equal(norm("L.x-y"), "L['x']-y");
}

static void test_normalize_keeps_what_the_regex_does_not_match(void **state)
{
    (void)state;
    assert_string_equal(norm(""), "");
    assert_string_equal(norm("L"), "L");
    assert_string_equal(norm("L['x']['y']"), "L['x']['y']");   /* already bracketed */
    assert_string_equal(norm("L['x'][0]"), "L['x'][0]");
    assert_string_equal(norm("L.0"), "L.0");                   /* leading digit after a dot */
    assert_string_equal(norm("L.1a.b"), "L.1a['b']");
    assert_string_equal(norm("L."), "L.");
    assert_string_equal(norm("L.x."), "L['x'].");
    assert_string_equal(norm("a..b"), "a.['b']");
    assert_string_equal(norm("..."), "...");
    assert_string_equal(norm("L.\xc3\xa9t\xc3\xa9"), "L.\xc3\xa9t\xc3\xa9");   /* ASCII letters only */
    assert_string_equal(norm("L.a\xc3\xa9"), "L['a']\xc3\xa9");
    assert_string_equal(norm("L. x"), "L. x");
    /* the regex does not know about quotes: neither do we */
    assert_string_equal(norm("L['a.b']"), "L['a['b']']");
}

static void test_normalize_truncates_like_snprintf(void **state)
{
    char buf[16];
    size_t i;
    (void)state;
    assert_int_equal(mguard_dyn_normalize_name("L.x.y", NULL, 0), 11);
    memset(buf, 'z', sizeof buf);
    assert_int_equal(mguard_dyn_normalize_name("L.x.y", buf, 0), 11);
    assert_int_equal(buf[0], 'z');                          /* cap 0: nothing written */
    for (i = 1; i <= 12; i++) {
        memset(buf, 'z', sizeof buf);
        assert_int_equal(mguard_dyn_normalize_name("L.x.y", buf, i), 11);
        assert_int_equal(strlen(buf), i - 1);
        assert_memory_equal(buf, "L['x']['y']", i - 1);
    }
    assert_int_equal(mguard_dyn_normalize_name("L.x.y", buf, 5), 11);
    assert_string_equal(buf, "L['x");
    assert_int_equal(mguard_dyn_normalize_name(NULL, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(mguard_dyn_normalize_name(NULL, NULL, 0), 0);
}

/* ---- the reference's test_dynamism.py ------------------------------------ */

/* test_dynamic_tensor: {"x": i, "y": ones(i, 1), "z": {0: ones(i)}} */
static void test_dynamic_tensor(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    mguard_dyn *d = mguard_dyn_create(ctx);
    int i;
    (void)state;
    for (i = 1; i <= 5; i++) {
        assert_int_equal(mguard_dyn_observe_scalar(d, "L['x']", i), MGUARD_OK);
        shape2(d, "L['y']", i, 1);
        shape1(d, "L['z'][0]", i);
    }
    assert_string_equal(fmt(d), "{'x': {\"L['x']\": (True,)}, 'y': {\"L['y']\": (True, False)}, 'z': {\"L['z'][0]\": (True,)}}");
    assert_int_equal(mguard_dyn_count(d), 3);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

static void test_dynamic_tensor_deeply_nested(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    mguard_dyn *d = mguard_dyn_create(ctx);
    int i;
    (void)state;
    for (i = 1; i <= 5; i++) shape1(d, "L.z.z.z.z[0]", i);
    assert_string_equal(fmt(d), "{'z': {\"L['z']['z']['z']['z'][0]\": (True,)}}");
    mguard_ctx_destroy(ctx);
}

/* test_mixed_dynamism: a: ones(i, 2); b: [ones(i), 2 + i]; c: {"d": 42} */
static void test_mixed_dynamism(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    mguard_dyn *d = mguard_dyn_create(ctx);
    int i;
    (void)state;
    for (i = 1; i <= 5; i++) {
        shape2(d, "L['a']", i, 2);
        shape1(d, "L['b'][0]", i);
        assert_int_equal(mguard_dyn_observe_scalar(d, "L['b'][1]", 2 + i), MGUARD_OK);
        assert_int_equal(mguard_dyn_observe_scalar(d, "L['c']['d']", 42), MGUARD_OK);
    }
    assert_string_equal(fmt(d), "{'a': {\"L['a']\": (True, False)}, "
                                "'b': {\"L['b'][0]\": (True,), \"L['b'][1]\": (True,)}, "
                                "'c': {\"L['c']['d']\": (False,)}}");
    mguard_ctx_destroy(ctx);
}

/* test_nn_module: two models M(3210, 30) and M(3211, 30) flattened by
   module_to_nested_dict. The first is given in dotted form, the second
   bracketed: the same paths. */
static void test_nn_module_paths_in_either_form(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    mguard_dyn *d = mguard_dyn_create(ctx);
    int m;
    (void)state;
    for (m = 0; m < 2; m++) {
        int64_t n_input = 3210 + m;
        const char *p = m == 0 ? "L.self._modules.y._modules.compress." : "L['self']['_modules']['y']['_modules']['compress']";
        char path[160];
        snprintf(path, sizeof path, m == 0 ? "%s_parameters.weight" : "%s['_parameters']['weight']", p);
        shape2(d, path, 30, n_input);
        snprintf(path, sizeof path, m == 0 ? "%s_parameters.bias" : "%s['_parameters']['bias']", p);
        shape1(d, path, 30);
        snprintf(path, sizeof path, m == 0 ? "%sbias" : "%s['bias']", p);
        shape1(d, path, 30);
        snprintf(path, sizeof path, m == 0 ? "%sin_features" : "%s['in_features']", p);
        mguard_dyn_observe_scalar(d, path, (double)n_input);
        snprintf(path, sizeof path, m == 0 ? "%sout_features" : "%s['out_features']", p);
        mguard_dyn_observe_scalar(d, path, 30);
        snprintf(path, sizeof path, m == 0 ? "%sweight" : "%s['weight']", p);
        shape2(d, path, 30, n_input);
        mguard_dyn_observe_scalar(d, m == 0 ? "L.self._modules.y.x" : "L['self']['_modules']['y']['x']", (double)n_input);
        mguard_dyn_observe_scalar(d, m == 0 ? "L.self.n_input" : "L['self']['n_input']", (double)n_input);
        mguard_dyn_observe_scalar(d, m == 0 ? "L.self.n_output" : "L['self']['n_output']", 30);
    }
    assert_int_equal(mguard_dyn_count(d), 9);
    assert_string_equal(fmt(d),
        "{'self': {"
        "\"L['self']['_modules']['y']['_modules']['compress']['_parameters']['weight']\": (False, True), "
        "\"L['self']['_modules']['y']['_modules']['compress']['_parameters']['bias']\": (False,), "
        "\"L['self']['_modules']['y']['_modules']['compress']['bias']\": (False,), "
        "\"L['self']['_modules']['y']['_modules']['compress']['in_features']\": (True,), "
        "\"L['self']['_modules']['y']['_modules']['compress']['out_features']\": (False,), "
        "\"L['self']['_modules']['y']['_modules']['compress']['weight']\": (False, True), "
        "\"L['self']['_modules']['y']['x']\": (True,), "
        "\"L['self']['n_input']\": (True,), "
        "\"L['self']['n_output']\": (False,)}}");
    assert_true(varies_at(d, "L.self.n_input", 0));
    assert_true(varies_at(d, "L['self'].n_input", 0));
    assert_false(varies_at(d, "L.self.n_output", 0));
    mguard_ctx_destroy(ctx);
}

/* ---- ranks, values, paths ------------------------------------------------- */

static void test_rank_may_change_between_examples(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    mguard_dyn *d = mguard_dyn_create(ctx);
    int64_t a[2] = {2, 3}, b[3] = {2, 4, 5}, c[1] = {2};
    bool dyn[4];
    size_t rank = 99;
    (void)state;
    mguard_dyn_observe(d, "L['x']", a, 2);
    mguard_dyn_observe(d, "L['x']", b, 3);     /* position 2 seen once: static */
    memset(dyn, 1, sizeof dyn);
    assert_true(mguard_dyn_dims(d, "L['x']", &rank, dyn, 4));
    assert_int_equal(rank, 3);
    assert_false(dyn[0]);
    assert_true(dyn[1]);
    assert_false(dyn[2]);
    assert_false(dyn[3]);                      /* past the rank: false */
    mguard_dyn_observe(d, "L['x']", c, 1);     /* lower rank: only position 0 compared */
    assert_string_equal(fmt(d), "{'x': {\"L['x']\": (False, True, False)}}");
    b[2] = 6;
    mguard_dyn_observe(d, "L['x']", b, 3);
    assert_string_equal(fmt(d), "{'x': {\"L['x']\": (False, True, True)}}");
    /* a dims buffer smaller than the rank gets the first positions */
    memset(dyn, 0, sizeof dyn);
    dyn[2] = true;
    assert_true(mguard_dyn_dims(d, "L.x", &rank, dyn, 2));
    assert_int_equal(rank, 3);
    assert_false(dyn[0]);
    assert_true(dyn[1]);
    assert_true(dyn[2]);                       /* past cap: untouched */
    rank = 99;
    assert_true(mguard_dyn_dims(d, "L.x", &rank, NULL, 4));   /* NULL varies: the rank alone */
    assert_int_equal(rank, 3);
    assert_true(varies_at(d, "L.x", 2));
    assert_false(varies_at(d, "L.x", 3));
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

static void test_rank_zero_shape(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    mguard_dyn *d = mguard_dyn_create(ctx);
    mguard_dyn_iter it;
    size_t rank = 99;
    (void)state;
    assert_int_equal(mguard_dyn_observe(d, "L['loss']", NULL, 0), MGUARD_OK);
    assert_true(mguard_dyn_dims(d, "L.loss", &rank, NULL, 0));   /* observed, rank 0 */
    assert_int_equal(rank, 0);
    rank = 99;
    assert_false(mguard_dyn_dims(d, "L.lost", &rank, NULL, 0));  /* never observed */
    assert_int_equal(rank, 0);
    assert_string_equal(fmt(d), "{'loss': {\"L['loss']\": ()}}");
    it = mguard_dyn_iterate(d);
    assert_true(mguard_dyn_next(&it));
    assert_int_equal(it.rank, 0);
    assert_true(it.is_shape);
    assert_false(mguard_dyn_next(&it));
    mguard_ctx_destroy(ctx);
}

/* Values compare like Python numbers in a set. */
static void test_values_compare_as_python_numbers(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    mguard_dyn *d = mguard_dyn_create(ctx);
    int64_t two = 2, big = 9007199254740993LL;   /* 2**53 + 1 */
    (void)state;
    mguard_dyn_observe_scalar(d, "L.a", 2.0);
    mguard_dyn_observe(d, "L.a", &two, 1);        /* 2 == 2.0 */
    mguard_dyn_observe_scalar(d, "L.b", 0.0);
    mguard_dyn_observe_scalar(d, "L.b", -0.0);    /* 0.0 == -0.0 */
    mguard_dyn_observe_scalar(d, "L.c", 0.0 / 0.0);
    mguard_dyn_observe_scalar(d, "L.c", 0.0 / 0.0);   /* NaN stays NaN: not a change */
    mguard_dyn_observe(d, "L.e", &big, 1);
    mguard_dyn_observe_scalar(d, "L.e", 9007199254740992.0);  /* 2**53 != 2**53 + 1 */
    mguard_dyn_observe_scalar(d, "L.f", 1e300);
    mguard_dyn_observe(d, "L.f", &two, 1);
    mguard_dyn_observe_scalar(d, "L.g", 2.5);
    mguard_dyn_observe(d, "L.g", &two, 1);
    mguard_dyn_observe_scalar(d, "L.h", 1.0 / 0.0);
    mguard_dyn_observe_scalar(d, "L.h", 1.0 / 0.0);
    assert_false(varies_at(d, "L.a", 0));
    assert_false(varies_at(d, "L.b", 0));
    assert_false(varies_at(d, "L.c", 0));
    assert_true(varies_at(d, "L.e", 0));
    assert_true(varies_at(d, "L.f", 0));
    assert_true(varies_at(d, "L.g", 0));
    assert_false(varies_at(d, "L.h", 0));
    mguard_ctx_destroy(ctx);
}

static void test_iterator_groups_by_top_level_name(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    mguard_dyn *d = mguard_dyn_create(ctx);
    mguard_dyn_iter it;
    static const char *want_group[] = {"x", "x", "x", "y", "0", "L", "q"};
    static const char *want_path[] = {"L['x']['a']", "L['x']['b']", "L['x']", "L['y']", "L[0]", "L", "q['r']"};
    int i;
    (void)state;
    shape1(d, "L.x.a", 1);
    shape1(d, "L['y']", 1);
    shape2(d, "L.x.b", 1, 2);
    mguard_dyn_observe_scalar(d, "L[0]", 1);
    shape1(d, "L.x", 1);
    shape1(d, "L", 1);
    shape1(d, "q.r", 1);
    shape2(d, "L.x.b", 1, 3);
    it = mguard_dyn_iterate(d);
    for (i = 0; i < 7; i++) {
        assert_true(mguard_dyn_next(&it));
        assert_string_equal(it.group, want_group[i]);
        assert_string_equal(it.path, want_path[i]);
        assert_int_equal(it.is_shape, i != 4);
    }
    assert_false(mguard_dyn_next(&it));
    assert_false(mguard_dyn_next(&it));
    /* an integer key prints unquoted, as Python prints the int key */
    assert_string_equal(fmt(d), "{'x': {\"L['x']['a']\": (False,), \"L['x']['b']\": (False, True), \"L['x']\": (False,)}, "
                                "'y': {\"L['y']\": (False,)}, 0: {'L[0]': (False,)}, 'L': {'L': (False,)}, "
                                "'q': {\"q['r']\": (False,)}}");
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

/* An unquoted subscript is an integer key only when Python would read it
   as one: L[x], L[00] and L[1.5] are string keys (each its own group), so
   the text stays a valid Python dict. */
static void test_only_a_decimal_integer_subscript_is_an_integer_key(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    mguard_dyn *d = mguard_dyn_create(ctx);
    (void)state;
    mguard_dyn_observe_scalar(d, "L[x]", 1);
    mguard_dyn_observe_scalar(d, "L[00]", 1);
    mguard_dyn_observe_scalar(d, "L[0]", 1);
    mguard_dyn_observe_scalar(d, "L[-12]", 1);
    mguard_dyn_observe_scalar(d, "L[1.5]", 1);
    mguard_dyn_observe_scalar(d, "L[-]", 1);
    mguard_dyn_observe_scalar(d, "L[-0]", 1);
    assert_string_equal(fmt(d), "{'x': {'L[x]': (False,)}, '00': {'L[00]': (False,)}, 0: {'L[0]': (False,)}, "
                                "-12: {'L[-12]': (False,)}, '1.5': {'L[1.5]': (False,)}, '-': {'L[-]': (False,)}, "
                                "'-0': {'L[-0]': (False,)}}");
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

static void test_iterator_survives_observations_during_the_walk(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    mguard_dyn *d = mguard_dyn_create(ctx);
    mguard_dyn_iter it;
    int n = 0;
    char path[32];
    (void)state;
    shape1(d, "L.a", 1);
    shape1(d, "L.b", 1);
    it = mguard_dyn_iterate(d);
    while (mguard_dyn_next(&it)) {
        snprintf(path, sizeof path, "L.new%d", n);
        if (n < 50) shape1(d, path, n);    /* grows (and moves) the records */
        n++;
    }
    assert_int_equal(n, 52);   /* the 50 paths added during the walk come after L.b, each once */
    assert_int_equal(mguard_dyn_count(d), 52);
    it = mguard_dyn_iterate(NULL);
    assert_false(mguard_dyn_next(&it));
    assert_false(mguard_dyn_next(NULL));
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

/* Python's repr picks the quote: double when the text holds a single quote
   and no double quote, else single with \' escaped. */
static void test_format_quotes_like_python_repr(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    mguard_dyn *d = mguard_dyn_create(ctx);
    (void)state;
    mguard_dyn_observe_scalar(d, "L[\"it's\"]", 1);
    mguard_dyn_observe_scalar(d, "L['say \"hi\"']", 1);
    mguard_dyn_observe_scalar(d, "L['back\\slash\ttab']", 1);
    assert_string_equal(fmt(d), "{\"it's\": {'L[\"it\\'s\"]': (False,)}, "
                                "'say \"hi\"': {'L[\\'say \"hi\"\\']': (False,)}, "
                                "'back\\\\slash\\ttab': {\"L['back\\\\slash\\ttab']\": (False,)}}");
    mguard_ctx_destroy(ctx);
}

static void test_format_truncates_like_snprintf(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    mguard_dyn *d = mguard_dyn_create(ctx);
    char full[256], small[12];
    size_t len, i;
    (void)state;
    assert_string_equal(fmt(d), "{}");
    shape2(d, "L.x", 1, 2);
    shape2(d, "L.x", 2, 2);
    len = mguard_dyn_format(d, full, sizeof full);
    assert_int_equal(len, strlen("{'x': {\"L['x']\": (True, False)}}"));
    assert_int_equal(mguard_dyn_format(d, NULL, 0), len);
    for (i = 1; i <= sizeof small; i++) {
        assert_int_equal(mguard_dyn_format(d, small, i), len);
        assert_int_equal(strlen(small), i - 1);
        assert_memory_equal(small, full, i - 1);
    }
    mguard_ctx_destroy(ctx);
}

static void test_long_paths(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    mguard_dyn *d = mguard_dyn_create(ctx);
    char path[1200], canon[4000];
    int i;
    (void)state;
    strcpy(path, "L");
    for (i = 0; i < 150; i++) strcat(path, ".abcdef");
    shape1(d, path, 1);
    shape1(d, path, 2);
    mguard_dyn_normalize_name(path, canon, sizeof canon);
    assert_int_equal(strlen(canon), 1 + 150 * strlen("['abcdef']"));
    assert_true(varies_at(d, canon, 0));
    assert_true(varies_at(d, path, 0));
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

/* ---- bad input, lifetime, allocation failure ------------------------------- */

static void test_bad_input_is_refused(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    mguard_dyn *d = mguard_dyn_create(ctx);
    int64_t one = 1;
    bool b[2];
    size_t rank;
    int fake[32];
    (void)state;
    memset(fake, 0, sizeof fake);
    assert_null(mguard_dyn_create(NULL));
    mguard_dyn_destroy(NULL);
    mguard_dyn_destroy((mguard_dyn *)(void *)fake);
    assert_int_equal(mguard_dyn_observe(NULL, "L.x", &one, 1), MGUARD_EINVAL);
    assert_int_equal(mguard_dyn_observe((mguard_dyn *)(void *)fake, "L.x", &one, 1), MGUARD_EINVAL);
    assert_int_equal(mguard_dyn_observe(d, NULL, &one, 1), MGUARD_EINVAL);
    assert_int_equal(log.code, MGUARD_LOG_NULL_ARG);
    assert_int_equal(mguard_dyn_observe(d, "", &one, 1), MGUARD_EINVAL);
    assert_int_equal(mguard_dyn_observe(d, "L.x", NULL, 1), MGUARD_EINVAL);
    assert_int_equal(log.code, MGUARD_LOG_NULL_ARG);
    assert_int_equal(mguard_dyn_observe_scalar(NULL, "L.x", 1), MGUARD_EINVAL);
    assert_int_equal(mguard_dyn_observe_scalar(d, NULL, 1), MGUARD_EINVAL);
    assert_int_equal(log.code, MGUARD_LOG_NULL_ARG);
    assert_int_equal(log.warnings, 4);
    assert_int_equal(mguard_dyn_count(d), 0);
    b[0] = b[1] = true;
    rank = 99;
    assert_false(mguard_dyn_dims(NULL, "L.x", &rank, b, 2));
    assert_true(rank == 0 && !b[0] && !b[1]);   /* not observed: rank 0, no position varies */
    b[0] = true;
    assert_false(mguard_dyn_dims(d, NULL, &rank, b, 1));
    assert_false(b[0]);
    assert_false(mguard_dyn_dims(d, "L.unknown", NULL, b, 2));
    assert_false(mguard_dyn_dims((mguard_dyn *)(void *)fake, "L.x", &rank, b, 2));
    assert_false(varies_at(NULL, "L.x", 0));
    assert_false(varies_at(d, NULL, 0));
    assert_int_equal(mguard_dyn_count(NULL), 0);
    assert_int_equal(mguard_dyn_format(NULL, NULL, 0), 0);
    assert_ctx_ok(ctx);
    mguard_dyn_destroy(d);
    mguard_ctx_destroy(ctx);
}

/* A path that normalizes to 256 bytes or more needs a buffer: without
   memory, dims answers "not observed" and says why (NOMEM), not silently. */
static void test_dims_of_a_long_path_without_memory_is_logged(void **state)
{
    test_log log;
    test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_dyn *d = mguard_dyn_create(ctx);
    char path[400];
    size_t rank = 9;
    bool b[2];
    int64_t dims[2] = {1, 2};
    (void)state;
    memset(path, 'p', sizeof path - 1);
    path[0] = 'L';
    path[1] = '.';
    path[sizeof path - 1] = '\0';
    assert_int_equal(mguard_dyn_observe(d, path, dims, 2), MGUARD_OK);
    assert_true(mguard_dyn_dims(d, path, &rank, b, 2));
    assert_int_equal(rank, 2);
    EXPECT_NO_LOG(log);
    al.fail_at = al.calls + 1;
    assert_false(mguard_dyn_dims(d, path, &rank, b, 2));
    al.fail_at = 0;
    assert_int_equal(rank, 0);
    EXPECT_LOG(log, log.errors, MGUARD_LOG_NOMEM);
    assert_true(mguard_dyn_dims(d, path, &rank, b, 2));   /* memory back: found */
    mguard_dyn_destroy(d);
    mguard_ctx_destroy(ctx);
}

static void test_ctx_destroy_destroys_its_trackers(void **state)
{
    test_alloc al;
    mguard_ctx *ctx = test_ctx(NULL, &al);
    mguard_dyn *d1 = mguard_dyn_create(ctx), *d2 = mguard_dyn_create(ctx);
    (void)state;
    shape2(d1, "L.x", 1, 2);
    shape2(d2, "L.y", 1, 2);
    mguard_dyn_destroy(d1);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

/* Every N over a workload: an observation that fails with ENOMEM changes
   nothing (format, count, membership), and the context checks OK. */
static int dyn_op(mguard_dyn *d, int k)
{
    int64_t s3[3] = {4, 5, 6}, s9[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    char path[400];
    mguard_status st;
    switch (k % 8) {
    case 0: st = mguard_dyn_observe(d, "L.x", s3, 3); break;
    case 1: st = mguard_dyn_observe_scalar(d, "L['x2']", k); break;
    case 2: st = mguard_dyn_observe(d, "L.y.z", s9, 9); break;
    case 3: st = mguard_dyn_observe(d, "L.x", s9, 9); break;   /* rank grows */
    case 4: st = mguard_dyn_observe_scalar(d, "L.y.w", 1.5); break;
    case 5: st = mguard_dyn_observe(d, "L[3]", s3, 2); break;
    case 6:
        memset(path, 'p', sizeof path);
        memcpy(path, "L.", 2);
        path[sizeof path - 1] = '\0';
        st = mguard_dyn_observe(d, path, s3, 1);                   /* long path: heap buffers */
        break;
    default: st = mguard_dyn_observe(d, "q.r.s", s3, 3); break;
    }
    if (st != MGUARD_OK) assert_int_equal(st, MGUARD_ENOMEM);
    return st == MGUARD_ENOMEM;
}

static void test_every_allocation_failure_leaves_state_unchanged(void **state)
{
    int k, reported = 0;
    (void)state;
    for (k = 0; k < 16; k++) {
        long n;
        for (n = 1; n < 1000; n++) {
            test_alloc al;
            test_log log;
            mguard_ctx *ctx = test_ctx(&log, &al);
            mguard_dyn *d = mguard_dyn_create(ctx);
            static char before[4096], after[4096];
            size_t count;
            int j;
            for (j = 0; j < k; j++) assert_int_equal(dyn_op(d, j), 0);
            mguard_dyn_format(d, before, sizeof before);
            count = mguard_dyn_count(d);
            al.fail_at = al.calls + n;
            if (dyn_op(d, k)) {
                al.fail_at = 0;
                mguard_dyn_format(d, after, sizeof after);
                assert_string_equal(before, after);
                assert_int_equal(mguard_dyn_count(d), count);
                assert_int_equal(log.errors, 1);
                reported++;
            }
            al.fail_at = 0;
            assert_int_equal(mguard_ctx_check(ctx), MGUARD_OK);
            mguard_ctx_destroy(ctx);
            assert_int_equal(al.live_blocks, 0);
            if (!al.failures) break;
        }
    }
    assert_int_equal(reported, 36);   /* the ENOMEM answers of this workload, each checked above */
}

/* A path whose text another part of the context interned first (a cache's
   attribute dependency) is the tracker's own: when that part lets its
   copy go, the path stays (issue 23: interned strings count holders). */
static void test_a_path_outlives_the_same_text_elsewhere(void **state)
{
    test_alloc al;
    mguard_ctx *ctx = test_ctx(NULL, &al);
    mguard_dyn *d = mguard_dyn_create(ctx);
    mguard_cache_desc cd;
    mguard_cache *c;
    mguard_dyn_iter it;
    static int obj, dep;
    long v = 1;
    (void)state;
    memset(&cd, 0, sizeof cd);
    cd.value_size = sizeof v;
    c = mguard_cache_create(ctx, &cd);
    assert_int_equal(mguard_cache_set(c, MGUARD_CACHE_KEYS(&obj), &v, 0), MGUARD_OK);
    assert_int_equal(mguard_cache_depend(c, MGUARD_CACHE_KEYS(&obj), &dep, "L['k'][0]"), MGUARD_OK);
    assert_int_equal(mguard_dyn_observe_scalar(d, "L['k'][0]", 1.0), MGUARD_OK);
    mguard_cache_destroy(c);
    assert_true(mguard_dyn_dims(d, "L['k'][0]", NULL, NULL, 0));
    it = mguard_dyn_iterate(d);
    assert_true(mguard_dyn_next(&it));
    assert_string_equal(it.path, "L['k'][0]");
    assert_false(mguard_dyn_next(&it));
    test_ctx_finish(ctx, &al);
}

/* Regression (issue 23): a tracker took a reference to its paths and
   group names and never gave them back, and each path after the first of
   a group took one more reference to the group's name; trackers made and
   destroyed with fresh names grew the context without bound. */
static void test_destroyed_trackers_with_fresh_names_leave_memory_flat(void **state)
{
    test_alloc al;
    mguard_ctx *ctx = test_ctx(NULL, &al);
    mguard_dyn *d;
    char p[64];
    long i;
    long long warm = 0;
    int64_t dims[1] = {3};
    (void)state;
    for (i = 0; i < 20000; i++) {
        if (i == 1000) warm = al.live_bytes;
        d = mguard_dyn_create(ctx);
        assert_non_null(d);
        snprintf(p, sizeof p, "L['x%ld'][0]", i);
        assert_int_equal(mguard_dyn_observe(d, p, dims, 1), MGUARD_OK);
        snprintf(p, sizeof p, "L['x%ld'][1]", i);   /* the same group */
        assert_int_equal(mguard_dyn_observe_scalar(d, p, 2.0), MGUARD_OK);
        assert_int_equal(mgt_interned_count(ctx), 3);   /* two paths, one group */
        mguard_dyn_destroy(d);
    }
    assert_true(al.live_bytes <= warm + 256);
    assert_int_equal(mgt_interned_count(ctx), 0);
    test_ctx_finish(ctx, &al);
}

/* A destroyed tracker leaves no interned string, and a path interned
   elsewhere too (mguard_intern's, pinned) stays. */
static void test_a_destroyed_tracker_leaves_no_interned_string(void **state)
{
    test_alloc al;
    mguard_ctx *ctx = test_ctx(NULL, &al);
    mguard_dyn *d = mguard_dyn_create(ctx), *e = mguard_dyn_create(ctx);
    int64_t dims[2] = {3, 4};
    const char *pinned = mguard_intern(ctx, "L['y']");
    (void)state;
    assert_int_equal(mguard_dyn_observe(d, "L['x'][0]", dims, 2), MGUARD_OK);
    assert_int_equal(mguard_dyn_observe(d, "L['x'][1]", dims, 1), MGUARD_OK);
    assert_int_equal(mguard_dyn_observe(d, "L['y']", dims, 2), MGUARD_OK);
    assert_int_equal(mguard_dyn_observe(e, "L['x'][0]", dims, 2), MGUARD_OK);
    /* L['y'] (pinned, also d's path), L['x'][0], L['x'][1], x, y */
    assert_int_equal(mgt_interned_count(ctx), 5);
    assert_int_equal(mguard_ctx_check(ctx), MGUARD_OK);
    mguard_dyn_destroy(d);
    assert_int_equal(mgt_interned_count(ctx), 3);   /* L['y'], e's L['x'][0] and x */
    mguard_dyn_destroy(e);
    assert_int_equal(mgt_interned_count(ctx), 1);
    assert_ptr_equal(mguard_intern(ctx, "L['y']"), pinned);
    test_ctx_finish(ctx, &al);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normalize_rewrites_attribute_access),
        cmocka_unit_test(test_normalize_keeps_what_the_regex_does_not_match),
        cmocka_unit_test(test_normalize_truncates_like_snprintf),
        cmocka_unit_test(test_dynamic_tensor),
        cmocka_unit_test(test_dynamic_tensor_deeply_nested),
        cmocka_unit_test(test_mixed_dynamism),
        cmocka_unit_test(test_nn_module_paths_in_either_form),
        cmocka_unit_test(test_rank_may_change_between_examples),
        cmocka_unit_test(test_rank_zero_shape),
        cmocka_unit_test(test_values_compare_as_python_numbers),
        cmocka_unit_test(test_iterator_groups_by_top_level_name),
        cmocka_unit_test(test_only_a_decimal_integer_subscript_is_an_integer_key),
        cmocka_unit_test(test_iterator_survives_observations_during_the_walk),
        cmocka_unit_test(test_format_quotes_like_python_repr),
        cmocka_unit_test(test_format_truncates_like_snprintf),
        cmocka_unit_test(test_long_paths),
        cmocka_unit_test(test_bad_input_is_refused),
        cmocka_unit_test(test_ctx_destroy_destroys_its_trackers),
        cmocka_unit_test(test_every_allocation_failure_leaves_state_unchanged),
        cmocka_unit_test(test_dims_of_a_long_path_without_memory_is_logged),
        cmocka_unit_test(test_a_path_outlives_the_same_text_elsewhere),
        cmocka_unit_test(test_destroyed_trackers_with_fresh_names_leave_memory_flat),
        cmocka_unit_test(test_a_destroyed_tracker_leaves_no_interned_string),
    };
    if (getenv("MGUARD_TEST_FILTER")) cmocka_set_test_filter(getenv("MGUARD_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
