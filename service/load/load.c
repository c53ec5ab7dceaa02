/* placeholder: module under construction */
extern int fbc_placeholder_load_load_c;
