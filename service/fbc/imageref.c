/* placeholder: module under construction */
extern int fbc_placeholder_fbc_imageref_c;
