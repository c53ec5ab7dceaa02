/* placeholder: module under construction */
extern int fbc_placeholder_load_ignore_c;
