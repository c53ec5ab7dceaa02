/*
 * go-yaml v2.4 value rules the writer needs: resolve.go (which plain
 * scalars are not strings), sorter.go (key order) and strconv's shortest
 * float formatting. Spec templates.md §6.2, §6.3.
 */
#include "service/goyaml/goyaml.h"
#include "service/base/utf8.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool in_list(const char *s, size_t n, const char *const *list)
{
	for (size_t i = 0; list[i] != NULL; i++)
		if (strlen(list[i]) == n && memcmp(list[i], s, n) == 0)
			return true;
	return false;
}

/* resolveMap of resolve.go: bools, nulls, infinities, NaN. */
static const char *const resolve_map[] = {
	"y",	"Y",	"yes",	"Yes",	 "YES",	  "true",  "True",  "TRUE",  "on",    "On",
	"ON",	"n",	"N",	"no",	 "No",	  "NO",	   "false", "False", "FALSE", "off",
	"Off",	"OFF",	"",	"~",	 "null",  "Null",  "NULL",  ".nan",  ".NaN",  ".NAN",
	".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", NULL};

/* Go getnum(value, fixed=false): one or two digits. */
static bool getnum12(const char **p, const char *end, int *out)
{
	const char *s = *p;
	if (s >= end || !is_digit(*s))
		return false;
	int v = *s - '0';
	s++;
	if (s < end && is_digit(*s)) {
		v = v * 10 + (*s - '0');
		s++;
	}
	*p = s;
	*out = v;
	return true;
}

static int days_in(int month, int year)
{
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (month == 2 && ((year % 4 == 0 && year % 100 != 0) || year % 400 == 0))
		return 29;
	return days[month - 1];
}

/* Go time.Parse's skip(): a space in the layout matches a run of spaces. */
static bool skip_lit(const char **p, const char *end, char lit)
{
	const char *s = *p;
	if (lit == ' ') {
		if (s < end && *s != ' ')
			return false;
		while (s < end && *s == ' ')
			s++;
		*p = s;
		return true;
	}
	if (s >= end || *s != lit)
		return false;
	*p = s + 1;
	return true;
}

/* One layout of go-yaml's allowedTimestampFormats, through Go time.Parse:
 * sep is 'T', 't', ' ' (time follows; zone only for T/t) or 0 (date only). */
static bool parse_ts_layout(const char *s, size_t n, char sep)
{
	const char *p = s, *end = s + n;
	if (n < 5)
		return false;
	int year = 0;
	for (int i = 0; i < 4; i++)
		year = year * 10 + (p[i] - '0');
	p += 4;
	int month, day;
	if (!skip_lit(&p, end, '-') || !getnum12(&p, end, &month) || month < 1 || month > 12)
		return false;
	if (!skip_lit(&p, end, '-') || !getnum12(&p, end, &day) || day > 31)
		return false;
	if (sep != 0) {
		int hour, min, sec;
		if (!skip_lit(&p, end, sep) || !getnum12(&p, end, &hour) || hour >= 24)
			return false;
		if (!skip_lit(&p, end, ':') || !getnum12(&p, end, &min) || min >= 60)
			return false;
		if (!skip_lit(&p, end, ':') || !getnum12(&p, end, &sec) || sec >= 60)
			return false;
		/* .999999999: optional fraction, '.' or ',' then digits */
		if (end - p >= 2 && (*p == '.' || *p == ',') && is_digit(p[1])) {
			p++;
			while (p < end && is_digit(*p))
				p++;
		}
		if (sep != ' ') {
			/* Z07:00 */
			if (p < end && *p == 'Z') {
				p++;
			} else {
				if (end - p < 6 || p[3] != ':' || (*p != '+' && *p != '-'))
					return false;
				if (!is_digit(p[1]) || !is_digit(p[2]) || !is_digit(p[4]) ||
				    !is_digit(p[5]))
					return false;
				int hr = (p[1] - '0') * 10 + (p[2] - '0');
				int mm = (p[4] - '0') * 10 + (p[5] - '0');
				if (hr > 24 || mm > 60)
					return false;
				p += 6;
			}
		}
	}
	if (p != end)
		return false;
	return day >= 1 && day <= days_in(month, year);
}

static bool is_timestamp(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && is_digit(s[i]))
		i++;
	if (i != 4 || i == n || s[i] != '-')
		return false;
	return parse_ts_layout(s, n, 'T') || parse_ts_layout(s, n, 't') ||
	       parse_ts_layout(s, n, ' ') || parse_ts_layout(s, n, 0);
}

static int digit_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 10;
	return 99;
}

/* Go strconv.ParseInt(s, 0, 64) succeeds, or ParseUint(s, 0, 64) does. */
static bool go_parse_int(const char *s, size_t n)
{
	size_t i = 0;
	bool neg = false, sign = false;
	if (i < n && (s[i] == '+' || s[i] == '-')) {
		neg = s[i] == '-';
		sign = true;
		i++;
	}
	if (i >= n)
		return false;
	unsigned base = 10;
	if (s[i] == '0' && i + 1 < n) {
		char b = s[i + 1];
		if (b == 'x' || b == 'X') {
			base = 16;
			i += 2;
		} else if (b == 'o' || b == 'O') {
			base = 8;
			i += 2;
		} else if (b == 'b' || b == 'B') {
			base = 2;
			i += 2;
		} else {
			base = 8;
			i += 1;
		}
		if (i >= n)
			return false;
	}
	uint64_t v = 0;
	bool over = false;
	for (; i < n; i++) {
		int d = digit_val(s[i]);
		if (d >= (int)base)
			return false;
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			over = true;
		else
			v = v * base + (uint64_t)d;
	}
	if (over)
		return false;
	if (!sign || !neg) {
		if (v <= (uint64_t)INT64_MAX)
			return true;
		return !sign; /* ParseUint accepts no sign */
	}
	return v <= (uint64_t)INT64_MAX + 1;
}

/* ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool yaml_style_float(const char *s, size_t n)
{
	size_t i = 0;
	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	if (i < n && s[i] == '.') {
		i++;
		size_t d = i;
		while (i < n && is_digit(s[i]))
			i++;
		if (i == d)
			return false;
	} else {
		size_t d = i;
		while (i < n && is_digit(s[i]))
			i++;
		if (i == d)
			return false;
		if (i < n && s[i] == '.') {
			i++;
			while (i < n && is_digit(s[i]))
				i++;
		}
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		size_t d = i;
		while (i < n && is_digit(s[i]))
			i++;
		if (i == d)
			return false;
	}
	return i == n;
}

/* ParseFloat succeeds on a text the regex above accepted: not an overflow. */
static bool float_in_range(const char *s, size_t n)
{
	char tmp[512];
	if (n >= sizeof(tmp)) {
		/* Very long digit strings: only the exponent can overflow. */
		return true;
	}
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	double d = strtod(tmp, NULL);
	return !isinf(d);
}

static bool binary_prefixed(const char *s, size_t n)
{
	/* ParseInt(plain[2:], 2, 64) after "0b", or "-"+plain[3:] after "-0b" */
	size_t i;
	bool neg = false;
	if (n >= 2 && s[0] == '0' && s[1] == 'b')
		i = 2;
	else if (n >= 3 && s[0] == '-' && s[1] == '0' && s[2] == 'b') {
		i = 3;
		neg = true;
	} else
		return false;
	if (i >= n)
		return false;
	/* ParseInt(base 2) itself accepts a sign after the prefix */
	bool sneg = false;
	if (s[i] == '+' || s[i] == '-') {
		if (neg)
			return false; /* "-" + "-..." */
		sneg = s[i] == '-';
		i++;
	}
	if (i >= n)
		return false;
	uint64_t v = 0;
	for (; i < n; i++) {
		if (s[i] != '0' && s[i] != '1')
			return false;
		if (v > (UINT64_MAX >> 1))
			return false;
		v = v * 2 + (uint64_t)(s[i] - '0');
	}
	if (neg || sneg)
		return v <= (uint64_t)INT64_MAX + 1;
	return v <= (uint64_t)INT64_MAX;
}

bool fbc_goyaml_plain_is_string(const char *s, size_t n)
{
	char hint;
	if (n == 0)
		return false; /* null */
	char c = s[0];
	if (c == '+' || c == '-')
		hint = 'S';
	else if (is_digit(c))
		hint = 'D';
	else if (strchr("yYnNtTfFoO~", c) != NULL)
		hint = 'M';
	else if (c == '.')
		hint = '.';
	else
		return true;
	if (in_list(s, n, resolve_map))
		return false;
	if (hint == 'M')
		return true;
	if (hint == '.') {
		/* ParseFloat on text starting with '.': .digits[exp], no underscores */
		return !(yaml_style_float(s, n) && float_in_range(s, n));
	}
	if (is_timestamp(s, n))
		return false;
	/* strings.Replace(in, "_", "", -1) */
	char small[256];
	char *plain = small;
	char *heap = NULL;
	if (n >= sizeof(small)) {
		heap = malloc(n + 1);
		if (heap == NULL)
			return true; /* cannot decide; a string is the safe reading */
		plain = heap;
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] != '_')
			plain[m++] = s[i];
	plain[m] = '\0';
	bool typed = go_parse_int(plain, m) ||
		     (yaml_style_float(plain, m) && float_in_range(plain, m)) ||
		     binary_prefixed(plain, m);
	free(heap);
	return !typed;
}

/* --- key order (sorter.go) --- */

static bool rune_is_letter(uint32_t r)
{
	if (r < 0x80)
		return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z');
	if (r == 0xAA || r == 0xB5 || r == 0xBA)
		return true;
	if (r < 0xC0)
		return false;
	if (r == 0xD7 || r == 0xF7)
		return false;
	/* Beyond Latin-1: the C library's Unicode tables (an approximation of Go's
	 * unicode.IsLetter; catalog keys are ASCII in practice). */
	static locale_t loc;
	static int tried;
	if (!__atomic_load_n(&tried, __ATOMIC_ACQUIRE)) {
		locale_t l = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
		loc = l;
		__atomic_store_n(&tried, 1, __ATOMIC_RELEASE);
	}
	if (loc == (locale_t)0)
		return r <= 0x24F;
	return iswalpha_l((wint_t)r, loc) != 0;
}

static bool rune_is_digit(uint32_t r)
{
	return r >= '0' && r <= '9';
}

static size_t to_runes(uint32_t **out, const char *s)
{
	size_t n = strlen(s);
	uint32_t *r = malloc((n + 1) * sizeof(*r));
	size_t k = 0;
	if (r == NULL) {
		*out = NULL;
		return 0;
	}
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t w = fbc_utf8_decode(&cp, (const unsigned char *)s + i, n - i);
		if (w == 0) {
			cp = 0xFFFD;
			w = 1;
		}
		r[k++] = cp;
		i += w;
	}
	*out = r;
	return k;
}

static bool key_less(const uint32_t *ar, size_t na, const uint32_t *br, size_t nb)
{
	for (size_t i = 0; i < na && i < nb; i++) {
		if (ar[i] == br[i])
			continue;
		bool al = rune_is_letter(ar[i]), bl = rune_is_letter(br[i]);
		if (al && bl)
			return ar[i] < br[i];
		if (al || bl)
			return bl;
		int64_t an = 0, bn = 0;
		if (ar[i] == '0' || br[i] == '0') {
			for (size_t j = i; j-- > 0 && rune_is_digit(ar[j]);) {
				if (ar[j] != '0') {
					an = 1;
					bn = 1;
					break;
				}
			}
		}
		size_t ai, bi;
		for (ai = i; ai < na && rune_is_digit(ar[ai]); ai++)
			an = (int64_t)((uint64_t)an * 10 + (ar[ai] - '0'));
		for (bi = i; bi < nb && rune_is_digit(br[bi]); bi++)
			bn = (int64_t)((uint64_t)bn * 10 + (br[bi] - '0'));
		if (an != bn)
			return an < bn;
		if (ai != bi)
			return ai < bi;
		return ar[i] < br[i];
	}
	return na < nb;
}

int fbc_goyaml_key_cmp(const char *a, const char *b)
{
	/* Fast path: plain ASCII letters/punctuation without digits at the
	 * first difference behave as documented; the general path handles all. */
	uint32_t *ar = NULL, *br = NULL;
	size_t na = to_runes(&ar, a), nb = to_runes(&br, b);
	int r;
	if (ar == NULL || br == NULL)
		r = strcmp(a, b);
	else if (key_less(ar, na, br, nb))
		r = -1;
	else if (key_less(br, nb, ar, na))
		r = 1;
	else
		r = strcmp(a, b);
	free(ar);
	free(br);
	return r;
}

/* --- floats --- */

void fbc_goyaml_format_float(char *out, size_t cap, double d)
{
	if (isnan(d)) {
		snprintf(out, cap, ".nan");
		return;
	}
	if (isinf(d)) {
		snprintf(out, cap, d > 0 ? ".inf" : "-.inf");
		return;
	}
	if (d == 0) {
		snprintf(out, cap, signbit(d) ? "-0" : "0");
		return;
	}
	/* shortest digits that round-trip */
	char e[64];
	int prec;
	for (prec = 1; prec <= 17; prec++) {
		snprintf(e, sizeof(e), "%.*e", prec - 1, d);
		if (strtod(e, NULL) == d)
			break;
	}
	/* e = [-]D[.DDD]e[+-]XX */
	const char *p = e;
	bool neg = false;
	if (*p == '-') {
		neg = true;
		p++;
	}
	char digs[32];
	size_t nd = 0;
	for (; *p != 'e' && *p != '\0'; p++)
		if (is_digit(*p) && nd < sizeof(digs) - 1)
			digs[nd++] = *p;
	while (nd > 1 && digs[nd - 1] == '0')
		nd--;
	digs[nd] = '\0';
	long exp = (*p == 'e') ? strtol(p + 1, NULL, 10) : 0;
	char res[64];
	size_t k = 0;
	if (neg)
		res[k++] = '-';
	if (exp < -4 || exp >= 6) {
		res[k++] = digs[0];
		if (nd > 1) {
			res[k++] = '.';
			for (size_t i = 1; i < nd; i++)
				res[k++] = digs[i];
		}
		res[k++] = 'e';
		res[k++] = exp < 0 ? '-' : '+';
		long ax = exp < 0 ? -exp : exp;
		char xb[8];
		int xl = snprintf(xb, sizeof(xb), "%02ld", ax);
		for (int i = 0; i < xl; i++)
			res[k++] = xb[i];
	} else if (exp < 0) {
		res[k++] = '0';
		res[k++] = '.';
		for (long i = 0; i < -exp - 1; i++)
			res[k++] = '0';
		for (size_t i = 0; i < nd; i++)
			res[k++] = digs[i];
	} else {
		/* exp + 1 integer digits */
		for (long i = 0; i <= exp; i++)
			res[k++] = (size_t)i < nd ? digs[i] : '0';
		if ((long)nd > exp + 1) {
			res[k++] = '.';
			for (size_t i = (size_t)exp + 1; i < nd; i++)
				res[k++] = digs[i];
		}
	}
	res[k] = '\0';
	snprintf(out, cap, "%s", res);
}
