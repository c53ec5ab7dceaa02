/* placeholder: module under construction */
extern int fbc_placeholder_resolver_resolver_c;
