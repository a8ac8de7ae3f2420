#!/bin/sh
# Debian's Chromium for Playwright, when its headless shell is installed too (chromiumLaunchOptions()
# picks this script then): a headless launch runs the headless shell, as Playwright's own download
# does, since the full browser opens a hidden window per context; a headed one runs the full browser.
# The shell's binary itself: Debian's /usr/bin/chromium-headless-shell runs it as a child, not in its place.
for arg; do
  case $arg in --headless | --headless=*) exec /usr/lib/chromium/chromium-headless-shell "$@" ;; esac
done
exec /usr/bin/chromium "$@"
