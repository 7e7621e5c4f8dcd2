pyt	# Guide

Some words.

## Install

R#pragma once

namespacun `make ie geo {

class Shape {
nspublt