package org.apache.rocketmq.logging.org.slf4j;
public interface Logger { void info(String f, Object... a); }
