/* widget_tree.c - names for a widget tree that the program edits.

   A GUI renders a tree of widgets in two phases, layout and paint, and
   charges the time of each to the widgets it is inside: each widget's own
   time (self) and its subtree's (total), as a profiler shows them. The
   tree changes after its first render, as a real GUI's does:
     1. a button is added to a toolbar that was already named, and attached
        under it, so it is "App.main.toolbar.save", not just "Button";
     2. a dialog is renamed, and its buttons follow;
     3. a list is refilled: its rows are forgotten and walked again.
   After each step the program prints the names the tracker gives; at the
   end, the time per widget, which stays with the name it was charged to. */
#define STB_DS_IMPLEMENTATION
#define MGUARD_IMPLEMENTATION
#include "mguard.h"

#include <stdio.h>

typedef struct widget widget;
struct widget {
    const char *type;
    int n;
    const char *names[4];
    widget *kids[4];
};

static const char *type_name(const void *w, void *user)
{
    (void)user;
    return ((const widget *)w)->type;
}

static bool child(const void *w, size_t i, const char **name, const void **kid, void *user)
{
    const widget *p = (const widget *)w;
    (void)user;
    if ((int)i >= p->n) return false;
    *name = p->names[i];
    *kid = p->kids[i];
    return true;
}

static void add(widget *parent, const char *name, widget *kid)
{
    parent->names[parent->n] = name;
    parent->kids[parent->n] = kid;
    parent->n++;
}

static mguard_scope *scope;

/* One render: layout, then paint, every widget entered in each phase. */
static void render(widget *w)
{
    int i;
    mguard_scope_enter(scope, w);
    mguard_scope_add(scope, "us", 10.0);
    for (i = 0; i < w->n; i++) render(w->kids[i]);
    mguard_scope_exit(scope, w);
}

static void show(const char *what, widget *const *ws, int n)
{
    int i;
    printf("%s\n", what);
    for (i = 0; i < n; i++) printf("  %s\n", mguard_scope_name(scope, ws[i]));
}

int main(void)
{
    static const char *const phases[2] = {"layout", "paint"};
    mguard_ctx *ctx = mguard_ctx_create(NULL);
    mguard_scope_desc d = {0};
    widget app = {"App", 0, {0}, {0}}, main_ = {"Panel", 0, {0}, {0}};
    widget toolbar = {"Toolbar", 0, {0}, {0}}, open = {"Button", 0, {0}, {0}};
    widget save = {"Button", 0, {0}, {0}}, dialog = {"Dialog", 0, {0}, {0}};
    widget ok = {"Button", 0, {0}, {0}}, cancel = {"Button", 0, {0}, {0}};
    widget list = {"List", 0, {0}, {0}}, row0 = {"Row", 0, {0}, {0}};
    widget row1 = {"Row", 0, {0}, {0}}, row2 = {"Row", 0, {0}, {0}};
    widget *all[] = {&app, &main_, &toolbar, &open, &list, &row0, &row1};

    d.type_name = type_name;
    d.child = child;
    d.phases = phases;
    d.nphases = 2;
    scope = mguard_scope_create(ctx, &d);
    add(&app, "main", &main_);
    add(&main_, "toolbar", &toolbar);
    add(&toolbar, "open", &open);
    add(&main_, "list", &list);
    add(&list, "0", &row0);
    add(&list, "1", &row1);
    add(&dialog, "ok", &ok);
    add(&dialog, "cancel", &cancel);

    render(&app);                               /* layout */
    mguard_scope_set_phase(scope, 1);
    render(&app);                               /* paint */
    mguard_scope_clear(scope, MGUARD_SCOPE_CLEAR_FRAMES);
    show("first render:", all, 7);

    /* 1. a button added after the toolbar was named */
    add(&toolbar, "save", &save);
    printf("\nsave added: %s (by its type: no walk saw it)\n", mguard_scope_name(scope, &save));
    mguard_scope_attach(scope, &toolbar, &save, "save");
    printf("save attached: %s\n", mguard_scope_name(scope, &save));

    /* 2. a dialog, first named by its type, moved under the app */
    printf("\ndialog: %s,", mguard_scope_name(scope, &dialog));   /* its lookup names its buttons */
    printf(" %s\n", mguard_scope_name(scope, &ok));
    mguard_scope_set_name(scope, &dialog, "App.confirm");
    printf("renamed: %s,", mguard_scope_name(scope, &dialog));
    printf(" %s,", mguard_scope_name(scope, &ok));
    printf(" %s\n", mguard_scope_name(scope, &cancel));

    /* 3. the list is refilled: row1 leaves, row2 takes its place */
    list.kids[1] = &row2;
    mguard_scope_forget(scope, &list);
    mguard_scope_name(scope, &list);           /* walks the list again */
    printf("\nlist refilled: row2 is %s,", mguard_scope_name(scope, &row2));
    printf(" row1 (gone from the tree) is %s\n", mguard_scope_name(scope, &row1));

    render(&app);
    printf("\ntime per widget, three renders:\n");
    {
        char table[2048];
        double self, total = mguard_scope_counter(scope, "App.main.list", "us", &self);
        mguard_scope_format(scope, MGUARD_SCOPE_TREE, table, sizeof table);
        fputs(table, stdout);
        printf("App.main.list: %g us of its own, %g with its rows\n", self, total);
        printf("App.main.list.1: %g us, two renders of row1 and one of row2 (a count stays with its name)\n",
               mguard_scope_counter(scope, "App.main.list.1", "us", NULL));
    }
    mguard_ctx_destroy(ctx);
    return 0;
}
