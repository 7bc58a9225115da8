/* xgb-load.c FILE - XGBoost's own loader on a file's bytes, nothing in
 * front: exit 0 loaded, 1 refused with an error; a crash is a signal. */
#include <stdio.h>
#include <stdlib.h>
#include <xgboost/c_api.h>

int main(int argc, char **argv)
{
	FILE *f = argc == 2 ? fopen(argv[1], "rb") : NULL;
	BoosterHandle h;
	long n;
	char *b;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0)
		return 2;
	rewind(f);
	if (!(b = malloc(n + 1)) || fread(b, 1, n, f) != (size_t)n)
		return 2;
	if (XGBoosterCreate(NULL, 0, &h))
		return 2;
	return XGBoosterLoadModelFromBuffer(h, b, n) ? 1 : 0;
}
