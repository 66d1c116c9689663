/* The Developer Options plugin has no public headers; SwiftPM only needs this include directory to exist. */
