/* placeholder: module under construction */
extern int fbc_placeholder_cel_cel_c;
