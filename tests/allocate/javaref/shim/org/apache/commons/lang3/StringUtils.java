package org.apache.commons.lang3;
public final class StringUtils {
    public static boolean isEmpty(CharSequence s) { return s == null || s.length() == 0; }
    public static boolean isBlank(CharSequence s) { return s == null || s.toString().trim().isEmpty(); }
    public static boolean isNoneEmpty(CharSequence... ss) {
        if (ss == null) return false;
        for (CharSequence s : ss) if (isEmpty(s)) return false;
        return true;
    }
}
