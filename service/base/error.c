#include "service/base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void fbc_error_init(fbc_error *err)
{
	if (!err)
		return;
	err->code = 0;
	err->where[0] = '\0';
	err->message[0] = '\0';
}

int fbc_error_set(fbc_error *err, int code, const char *where, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	snprintf(err->where, sizeof(err->where), "%s", where ? where : "");
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return code;
}

void fbc_error_prefix(fbc_error *err, const char *fmt, ...)
{
	char prefix[FBC_ERROR_MESSAGE_MAX];
	char old[FBC_ERROR_MESSAGE_MAX];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->message, sizeof(old));
	snprintf(err->message, sizeof(err->message), "%s: %s", prefix, old);
}

const char *fbc_error_code_name(int code)
{
	switch (code) {
	case FBC_OK:
		return "OK";
	case FBC_ENOMEM:
		return "ENOMEM";
	case FBC_EINVAL:
		return "EINVAL";
	case FBC_EIO:
		return "EIO";
	case FBC_ELIMIT:
		return "ELIMIT";
	case FBC_ENOTFOUND:
		return "ENOTFOUND";
	case FBC_EPARSE:
		return "EPARSE";
	case FBC_ECONFLICT:
		return "ECONFLICT";
	case FBC_EINTERNAL:
		return "EINTERNAL";
	case FBC_EUNAVAIL:
		return "EUNAVAIL";
	case FBC_EAUTH:
		return "EAUTH";
	default:
		return "EUNKNOWN";
	}
}
