/*
 * The Unicode TS #39 confusable skeleton as ICU computes it (uspoof_getSkeletonUTF8), for two uses:
 *   icu-skeleton table   prints, for every code point that is its own NFD and whose skeleton differs from itself, the
 *                        code point and its skeleton as hex (generate.sh turns that into the server's table);
 *   icu-skeleton         reads UTF-8 lines on standard input and prints, for each, its two look-alike keys as
 *                        DisplayName.lookalikeKeys defines them, tab-separated: skeleton(fold(skeleton(fold(line)))) and
 *                        skeleton(fold(skeleton(line))), with fold ICU's full case folding then lowercasing (the tests
 *                        compare BioAuth's keys with these).
 * Built against the system's ICU (Debian's libicu-dev): cc icu-skeleton.c -licui18n -licuuc -o icu-skeleton
 */
#include <stdio.h>
#include <string.h>
#include <unicode/uspoof.h>
#include <unicode/unorm2.h>
#include <unicode/uchar.h>
#include <unicode/utf8.h>
#include <unicode/uversion.h>
#include <unicode/ustring.h>

static USpoofChecker *checker;

static int skeleton(const char *in, int32_t length, char *out, int32_t capacity) {
    UErrorCode status = U_ZERO_ERROR;
    int32_t written = uspoof_getSkeletonUTF8(checker, 0, in, length, out, capacity, &status);
    if (U_FAILURE(status)) { fprintf(stderr, "uspoof_getSkeletonUTF8: %s\n", u_errorName(status)); return -1; }
    return written;
}

int main(int argc, char **argv) {
    UErrorCode status = U_ZERO_ERROR;
    checker = uspoof_open(&status);
    if (U_FAILURE(status)) { fprintf(stderr, "uspoof_open: %s\n", u_errorName(status)); return 1; }
    if (argc > 1 && strcmp(argv[1], "version") == 0) {
        UVersionInfo version; char text[U_MAX_VERSION_STRING_LENGTH];
        u_getUnicodeVersion(version); u_versionToString(version, text);
        printf("Unicode %s, ICU %s\n", text, U_ICU_VERSION);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "table") == 0) {
        const UNormalizer2 *nfd = unorm2_getNFDInstance(&status);
        for (UChar32 c = 0; c <= 0x10FFFF; c++) {
            if (c >= 0xD800 && c <= 0xDFFF) continue;
            if (u_charType(c) == U_UNASSIGNED) continue;
            UChar units[2]; int32_t n = 0; U16_APPEND_UNSAFE(units, n, c);
            if (!unorm2_isNormalized(nfd, units, n, &status)) continue;
            char in[8]; int32_t length = 0; U8_APPEND_UNSAFE(in, length, c);
            char out[256]; int32_t written = skeleton(in, length, out, sizeof out);
            if (written < 0) return 1;
            if (written == length && memcmp(in, out, length) == 0) continue;
            printf("%04X", c);
            for (int32_t i = 0; i < written;) { UChar32 d; U8_NEXT_UNSAFE(out, i, d); printf(" %04X", d); }
            printf("\n");
        }
        return 0;
    }
    static char line[65536], out[262144], text[262144];
    static UChar units[262144], foldedUnits[262144];
    while (fgets(line, sizeof line, stdin)) {
        int32_t length = (int32_t)strcspn(line, "\n");
        /* The two keys as the steps they are: 'f' folds, 's' takes the skeleton, in order. */
        const char *plans[2] = {"fsfs", "sfs"};
        for (int key = 0; key < 2; key++) {
            int32_t textLength = length;
            memcpy(text, line, length);
            for (const char *step = plans[key]; *step; step++) {
                if (*step == 'f') {
                    int32_t n = 0, m = 0;
                    u_strFromUTF8(units, 262144, &n, text, textLength, &status);
                    int32_t f = u_strFoldCase(foldedUnits, 262144, units, n, U_FOLD_CASE_DEFAULT, &status);
                    /* then lowercased, as DisplayName.fold does */
                    int32_t l = u_strToLower(units, 262144, foldedUnits, f, "", &status);
                    u_strToUTF8(text, sizeof text, &m, units, l, &status);
                    if (U_FAILURE(status)) { fprintf(stderr, "folding: %s\n", u_errorName(status)); return 1; }
                    textLength = m;
                } else {
                    int32_t written = skeleton(text, textLength, out, sizeof out);
                    if (written < 0) return 1;
                    memcpy(text, out, written);
                    textLength = written;
                }
            }
            fwrite(text, 1, textLength, stdout);
            putchar(key == 0 ? '\t' : '\n');
        }
    }
    return 0;
}
