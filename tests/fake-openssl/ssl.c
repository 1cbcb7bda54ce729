/* The fake libssl: nothing in it, it only has to exist. */
int fake_libssl_present = 1;
