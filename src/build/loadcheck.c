/*
 * perfbisect's load check of a published OpenSSL prefix (see loadcheck.rs).
 * Links nothing but libc and libdl: the libraries under test are the only
 * OpenSSL this process ever sees.
 *
 *   loadcheck L PATH        dlopen(PATH, RTLD_NOW) and keep it loaded
 *   loadcheck S PATH SYMBOL PATH (loaded before) must export SYMBOL
 *
 * Arguments are processed in order, so libcrypto is loaded before libssl and
 * the modules, which then bind to it (same soname) and not to any other.
 * On stdout, "loading PATH" before each dlopen, and one line per problem:
 * "load PATH: dlerror()" or "symbol PATH SYMBOL"; exit status 0 when there is
 * none, 1 otherwise, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIBS 256

static const char *paths[MAX_LIBS];
static void *handles[MAX_LIBS];
static int nlibs;

static void *loaded(const char *path)
{
    for (int i = 0; i < nlibs; i++)
        if (strcmp(paths[i], path) == 0)
            return handles[i];
    return NULL;
}

/*
 * dlsym also searches the library's dependencies (libssl's libcrypto):
 * the symbol must be defined in PATH itself.
 */
static int defines(void *h, const char *path, const char *symbol)
{
    Dl_info info;
    char want[PATH_MAX], got[PATH_MAX];
    void *p;

    dlerror();
    p = dlsym(h, symbol);
    if (p == NULL || dladdr(p, &info) == 0 || info.dli_fname == NULL)
        return 0;
    if (realpath(path, want) == NULL || realpath(info.dli_fname, got) == NULL)
        return 0;
    return strcmp(want, got) == 0;
}

int main(int argc, char **argv)
{
    int problems = 0;
    int i = 1;

    while (i < argc) {
        if (strcmp(argv[i], "L") == 0 && i + 1 < argc) {
            void *h;

            /* Who to blame if a constructor kills the process. */
            printf("loading %s\n", argv[i + 1]);
            fflush(stdout);
            h = dlopen(argv[i + 1], RTLD_NOW | RTLD_LOCAL);
            if (h == NULL) {
                const char *e = dlerror();
                printf("load %s: %s\n", argv[i + 1], e ? e : "unknown error");
                problems++;
            } else if (nlibs < MAX_LIBS) {
                paths[nlibs] = argv[i + 1];
                handles[nlibs++] = h;
            }
            i += 2;
        } else if (strcmp(argv[i], "S") == 0 && i + 2 < argc) {
            void *h = loaded(argv[i + 1]);
            /* A library that did not load was reported already. */
            if (h != NULL && !defines(h, argv[i + 1], argv[i + 2])) {
                printf("symbol %s %s\n", argv[i + 1], argv[i + 2]);
                problems++;
            }
            i += 3;
        } else {
            fprintf(stderr, "loadcheck: bad argument %s\n", argv[i]);
            return 2;
        }
    }
    fflush(stdout);
    return problems ? 1 : 0;
}
