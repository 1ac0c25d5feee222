/**
 * Visible ASCII and tab: a header value the references' HTTP client reads as
 * text. One with anything else it leaves out of an answer's headers, and as a
 * redirect's `location` it does not follow.
 */
const VISIBLE_ASCII = /^[\t\x20-\x7e]*$/;

export const isHeaderText = (value: string): boolean => VISIBLE_ASCII.test(value);
